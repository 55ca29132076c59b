"""The engine: one SimPy run, its state, the sockets layers plug into, capacity, and the books."""
