"""`countbot import --from openclaw|hermes|nanobot PATH`: another assistant's persona, memory,
skills and scheduled jobs brought into this instance, with a report of what was left."""
