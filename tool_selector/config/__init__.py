"""Settings (one object, built at the edge) and the operator's server configuration."""
