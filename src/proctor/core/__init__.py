"""proctor's core: plain records and tables the other packages stand on; it imports nothing of proctor above util/."""
