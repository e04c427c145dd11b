"""The reference web client's static files (HTML, CSS, ES modules); served by ``service.api.web``."""
