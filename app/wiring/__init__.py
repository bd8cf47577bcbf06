"""Which adapter implements which port, built from the settings: the whole service
(`service`), counting alone (`counting`, all `context-compact count` builds) and the
toolkit's service (`toolkit`). No face: each command imports only the module it needs."""
