"""Host side of fabriclab: frame formats, senders, capture and trace analysis."""
