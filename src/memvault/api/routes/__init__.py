"""Route modules; each only translates between HTTP and one core operation."""

from memvault.api.path_text import register_path_texts

register_path_texts()
