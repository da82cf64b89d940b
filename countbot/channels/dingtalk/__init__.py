"""The DingTalk channel: dingtalk-stream's Stream mode in, the robot OpenAPI out."""
