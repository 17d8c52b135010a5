"""Scene backends behind one interface (procedural houses, HM3D files, habitat-sim) and navigation."""
