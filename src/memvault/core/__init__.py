"""Pure memory logic shared by the Workers runtime and the local mode."""
