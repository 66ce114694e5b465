"""A server's secret values are hidden wherever its configuration is rendered (issue 39, finding 3):
names stay, values become ``***``, ``${VAR}`` references stay references; the operator (and an admin
key) can still ask for the configuration as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.root.container import Container
from tool_selector.catalog import admin
from tool_selector.config.secrets import mask_launch_text, mask_text
from tool_selector.config.servers import ServerConfig
from tool_selector.config.settings import Settings


def test_a_launch_line_names_the_env_variables_and_hides_their_values_but_keeps_references() -> None:
    config = ServerConfig(
        command="github-mcp-server",
        args=["stdio"],
        env={"API_TOKEN": "sk-live-123456", "DB_PASSWORD": "hunter22", "GITHUB_TOKEN": "${GITHUB_TOKEN}"},
        cwd="/srv/gh",
    )
    line = config.launch_line()
    assert line == (
        "cd /srv/gh && env 'API_TOKEN=***' 'DB_PASSWORD=***' 'GITHUB_TOKEN=${GITHUB_TOKEN}' "
        "github-mcp-server stdio"
    )
    assert config.launch_line(reveal=True) == (
        "cd /srv/gh && env API_TOKEN=sk-live-123456 DB_PASSWORD=hunter22 'GITHUB_TOKEN=${GITHUB_TOKEN}' "
        "github-mcp-server stdio"
    )


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/mcp?token=sk-123&team=a", "https://mcp.example.com/mcp?token=***&team=***"),
        ("https://bob:s3cret@mcp.example.com:8443/mcp", "https://***:***@mcp.example.com:8443/mcp"),
        ("https://ghp_abcdef@mcp.example.com/mcp", "https://***@mcp.example.com/mcp"),
        ("https://mcp.example.com/mcp?key=${DOCS_KEY}", "https://mcp.example.com/mcp?key=${DOCS_KEY}"),
        ("https://mcp.example.com/cb#access_token=abc", "https://mcp.example.com/cb#access_token=***"),
        ("${DOCS_URL}", "${DOCS_URL}"),
    ],
)
def test_a_url_keeps_its_host_and_path_and_hides_credentials_and_query_values(url: str, shown: str) -> None:
    config = ServerConfig(url=url, headers={"Authorization": "Bearer sk-live-abcdef"})
    assert config.launch_line() == f"{shown} (headers: Authorization)"
    assert config.masked().headers == {"Authorization": "***"}


def test_arguments_hide_secret_options_env_assignments_and_credentials_in_urls() -> None:
    config = ServerConfig(
        command="npx",
        args=[
            "-y",
            "@modelcontextprotocol/server-postgres",
            "postgresql://app:pg-pass-1@db.local/app?sslpassword=x1",
            "--api-key",
            "sk-ant-999",
            "--access-token=tok-777",
            "-e",
            "SLACK_TOKEN=xoxb-1",
            "--port",
            "8080",
            "--keyword",
            "plain",
        ],
    )
    assert config.masked().args == [
        "-y",
        "@modelcontextprotocol/server-postgres",
        "postgresql://***:***@db.local/app?sslpassword=***",
        "--api-key",
        "***",
        "--access-token=***",
        "-e",
        "SLACK_TOKEN=***",
        "--port",
        "8080",
        "--keyword",
        "plain",
    ]
    assert not {"pg-pass-1", "sk-ant-999", "tok-777", "xoxb-1", "x1"} & set(config.launch_line().split("'"))


def test_a_literal_default_of_a_reference_is_hidden_and_a_value_mixing_text_and_references_keeps_them() -> (
    None
):
    config = ServerConfig(
        url="https://x.test/mcp",
        headers={"Authorization": "Bearer ${TOKEN}", "X-Key": "${KEY:-dev-key-123}", "X-Empty": "${E:-}"},
    )
    assert config.masked().headers == {
        "Authorization": "***${TOKEN}",
        "X-Key": "${KEY:-***}",
        "X-Empty": "${E:-}",
    }


def test_text_about_a_server_loses_its_configured_and_resolved_values_and_every_urls_credentials() -> None:
    config = ServerConfig(
        url="https://mcp.example.com/mcp?token=${DOCS_TOKEN}",
        headers={"Authorization": "Bearer literal-bearer-1"},
    )
    hidden = config.secret_values({"DOCS_TOKEN": "resolved-token-42"})
    text = (
        "401 for url 'https://mcp.example.com/mcp?token=resolved-token-42' with literal-bearer-1; "
        "see https://u:p@other.test/x?sig=abc"
    )
    assert mask_text(text, hidden) == (
        "401 for url 'https://mcp.example.com/mcp?token=***' with ***; see https://***:***@other.test/x?sig=***"
    )
    assert mask_text("short values such as 'on' stay: on", ["on"]) == "short values such as 'on' stay: on"


def test_an_audit_row_written_before_masking_reads_back_without_its_values(tmp_path: Path) -> None:
    """Rows of 4a9b52f kept the whole launch line; reading the audit hides the values in them too."""
    old = "cd /srv && env API_TOKEN=sk-live-old-1 'REF=${R}' server --token tok-old-2 'https://h.test/?k=v-old-3'"
    with Container(Settings(data_dir=tmp_path / "data")) as container:
        container.writer.record("cli:me", "config.enable", "config:x", launch=old)
        (row,) = admin.read_audit(container.store, target="config:x")
    assert (
        row.details["launch"]
        == mask_launch_text(old)
        == ("cd /srv && env 'API_TOKEN=***' 'REF=${R}' server --token '***' 'https://h.test/?k=***'")
    )
    assert "old-" not in json.dumps(row.details)
