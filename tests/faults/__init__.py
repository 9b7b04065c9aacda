"""The fault harness: a mixed load against a real `collab serve`, SIGKILL at random moments,
a restart on the same database file, and checks after every restart (see harness.py)."""
