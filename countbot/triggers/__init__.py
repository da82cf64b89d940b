"""Things that happen start turns: signed webhooks, watched folders, watched mailboxes, each
event recorded before it is acknowledged and run once (`feature.py` wires it into the daemon)."""
