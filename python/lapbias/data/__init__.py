"""Input data: the protocol's input format, its validation and the drop report."""
