"""The ``weaviate`` settings group: the Weaviate backend (``settings.weaviate``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from tool_selector.core.errors import ConfigurationError


def _endpoint(url: str, setting: str, default_port: int) -> tuple[str, int, bool]:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https", "grpc", "grpcs") or not parts.hostname:
        raise ConfigurationError(
            f"{setting} = {url!r} is not an address Weaviate can be reached at.",
            hint="Use http://HOST:PORT (or https://), e.g. http://localhost:8080 and http://localhost:50051.",
        )
    try:
        port = parts.port or (443 if parts.scheme in ("https", "grpcs") else default_port)
    except ValueError as exc:
        raise ConfigurationError(
            f"{setting} = {url!r} has a bad port: {exc}.", hint="Use http://HOST:PORT with a numeric port."
        ) from exc
    return parts.hostname, port, parts.scheme in ("https", "grpcs")


class WeaviateSettings(BaseModel):
    """The Weaviate backend (used when ``backend = "weaviate"``); passed whole to the backend."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(default="http://localhost:8080", description="Weaviate's HTTP address (REST)")
    grpc_url: str | None = Field(
        default=None, description="Weaviate's gRPC address; None = the HTTP host, port 50051"
    )
    api_key: SecretStr | None = Field(default=None, description="API key, when the server asks for one")
    collection: str = Field(
        default="Tool", pattern=r"^[A-Z][A-Za-z0-9_]*$", description="collection (class) name"
    )
    connect_timeout_s: float = Field(default=5.0, gt=0, le=120, description="connect and health check")
    query_timeout_s: float = Field(default=10.0, gt=0, le=600, description="one search or read")
    insert_timeout_s: float = Field(default=60.0, gt=0, le=3600, description="one batch write")
    max_attempts: int = Field(
        default=3, ge=1, le=10, description="tries on transient failures (unreachable, 502-504, timeouts)"
    )

    def endpoints(self) -> tuple[tuple[str, int, bool], tuple[str, int, bool]]:
        """((http host, port, secure), (grpc host, port, secure)), or a ConfigurationError."""
        http = _endpoint(self.url, "weaviate.url", 8080)
        grpc_address = self.grpc_url or f"{'https' if http[2] else 'http'}://{http[0]}:50051"
        return http, _endpoint(grpc_address, "weaviate.grpc_url", 50051)

    @property
    def address(self) -> str:
        (host, port, secure), (ghost, gport, _) = self.endpoints()
        return f"{'https' if secure else 'http'}://{host}:{port} (gRPC {ghost}:{gport})"
