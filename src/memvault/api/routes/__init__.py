"""Route modules; each only translates between HTTP and one core operation."""
