"""The WSGI entry point for servers: ``service.wsgi:app``."""

from service.api import create_app

app = create_app()
