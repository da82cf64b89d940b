"""Understanding what people send: voice notes become transcripts, documents become text.

`reader.MediaReader` is the one entry point the channels and the web upload call. The heavy work
(speech recognition, document conversion, SILK decoding) runs in short-lived child processes
(`child.py` starts them, `worker.py` is their side), so the daemon's event loop stays free and a
crash or a runaway file costs one child, never the daemon. `documents.py` imports nothing of
ours outside this package, so `read_file` may use it from the tools layer.
"""
