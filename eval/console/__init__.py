"""The operator console's demo data and screenshots (``lab ui-screenshots``)."""
