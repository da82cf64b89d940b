"""Models that run on this machine: a llama.cpp child server, its catalogue and downloads."""
