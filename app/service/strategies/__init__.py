"""One module per strategy; `app.service.registry` maps their names to them."""
