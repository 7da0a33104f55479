"""The kit's legs: pure checks over what a host put on the wire, one module per leg."""
