"""The transparent proxy (docs/proxy.md): the ASGI app an agent's SDK talks to instead of
its provider (`app`), what it does to a request on the way (`compactor`), which headers
cross it (`headers`) and the errors it answers itself (`errors`)."""
