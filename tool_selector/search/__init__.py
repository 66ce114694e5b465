"""Search backends behind one narrow protocol, and the text handling they share."""
