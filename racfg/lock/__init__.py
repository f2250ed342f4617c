"""One writer per site: the lock every command that touches a site takes.

``local`` is this checkout's flock'ed file and ``site_change_lock``, which takes it and then the
site's own lock; ``site_lock`` is that lock, held by a live SSH session on the site's lock host so that it
binds every checkout and controller; ``scripts`` are the shell scripts that session runs there.
"""
