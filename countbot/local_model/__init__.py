"""The local model: `local/<name>` models CountBot runs itself in an xllamacpp child server.

`catalogue` names the models it knows (publisher, licence, hash), `pull` fetches and verifies
them, `server` runs one child (`server_main` is the child), `models` picks the file and the
built-in default for the daemon and keeps one child for the model the settings name.
"""
