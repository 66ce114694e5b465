"""A proxied result within the gateway's caps (services/gateway/results.py), block by block; the same
caps end to end, through a real upstream and the real MCP client: tests/routes/test_gateway_shown.py."""

from __future__ import annotations

import base64

from mcp import types

from services.gateway.results import NOTE_PREFIX, capped_result


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _image(size: int) -> types.ImageContent:
    return types.ImageContent(
        type="image", data=base64.b64encode(b"\0" * size).decode(), mime_type="image/png"
    )


def test_a_result_within_the_caps_is_passed_as_the_upstream_sent_it() -> None:
    result = types.CallToolResult(content=[_text("a" * 600), _text("b" * 400), _image(900)])
    assert capped_result(result, max_chars=1000, max_media_bytes=1000) is result


def test_text_over_the_cap_is_cut_where_it_crosses_it_later_blocks_dropped_and_a_note_says_so() -> None:
    result = types.CallToolResult(content=[_text("a" * 600), _text("b" * 600), _text("c" * 600)])
    capped = capped_result(result, max_chars=1000, max_media_bytes=1000)
    texts = [c.text for c in capped.content if isinstance(c, types.TextContent)]
    assert texts[:2] == ["a" * 600, "b" * 400] and len(texts) == 3
    note = texts[2]
    assert note.startswith(NOTE_PREFIX) and "1,800 characters" in note and "1,000" in note
    assert "gateway.max_result_chars" in note and "Ask the tool for less" in note
    assert capped.is_error is not True


def test_images_past_the_media_cap_are_left_out_counted_by_size_and_the_note_names_them() -> None:
    result = types.CallToolResult(content=[_image(600), _text("ok"), _image(600), _image(700)])
    capped = capped_result(result, max_chars=1000, max_media_bytes=1000)
    kinds = [c.type for c in capped.content]
    assert kinds == ["image", "text", "text"]
    note = capped.content[-1]
    assert isinstance(note, types.TextContent)
    assert "2 images (1,300 bytes) left out" in note.text and "gateway.max_result_media_bytes" in note.text


def test_an_embedded_text_resource_counts_by_its_size_and_is_dropped_whole_past_the_cap() -> None:
    resource = types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri="file:///log", text="x" * 5000)
    )
    capped = capped_result(types.CallToolResult(content=[resource]), max_chars=1000, max_media_bytes=1000)
    assert [c.type for c in capped.content] == ["text"]
    assert "1 embedded resource (5,000 bytes)" in capped.content[0].text  # type: ignore[union-attr]


def test_structured_content_over_the_cap_is_dropped_and_the_result_becomes_an_error_saying_why() -> None:
    result = types.CallToolResult(content=[_text("3 points")], structured_content={"points": ["x" * 2000]})
    capped = capped_result(result, max_chars=1000, max_media_bytes=1000)
    assert capped.structured_content is None and capped.is_error is True
    assert "structured content" in capped.content[-1].text  # type: ignore[union-attr]
    small = types.CallToolResult(content=[_text("3 points")], structured_content={"points": [1, 2, 3]})
    assert capped_result(small, max_chars=1000, max_media_bytes=1000) is small
