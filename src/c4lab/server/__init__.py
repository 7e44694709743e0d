"""The game server: the web page, rooms for local and online play, storage."""
