"""Web access: the `web_fetch` and `web_search` tools and what keeps fetching safe.

`web_fetch` reads one page as text; `address_check` refuses private, loopback and link-local
targets (IPv4 hidden in IPv6 too) at every hop, and `bounded_decoding` undoes Content-Encodings
without letting a small body expand past the cap. `web_search` asks the configured backend
(Brave or SearXNG). The runtime registers both tools for every turn (`runtime/builtin_tools.py`).
"""
