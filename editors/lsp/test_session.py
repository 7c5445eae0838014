"""The real `collc lsp` binary driven by pytest-lsp, once per recorded client.

pytest-lsp ships the capabilities that real clients send in `initialize`; each test runs as
VS Code 1.65, Neovim 0.7 and the latest recorded Neovim, and pytest-lsp checks the server's
replies against what that client declared (LspSpecificationWarning is an error here, see
pytest.ini). The session is the one editors/lsp/nvim_test.lua runs in a real Neovim: open
editors/lsp/error.coll, get its E0024 diagnostic, hover, go to definition (also into the
standard library), complete, format, fix the error with an edit.

Run by editors/lsp-test.sh; needs COLLC_BIN (the collc binary).
"""

import os
import pathlib

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

HERE = pathlib.Path(__file__).resolve().parent
FIXTURE = HERE / "error.coll"
URI = FIXTURE.as_uri()
COLLC = os.environ.get("COLLC_BIN", str(HERE.parent.parent / "target" / "debug" / "collc"))
CLIENTS = ["visual-studio-code", "neovim@v0.7", "neovim"]


@pytest_lsp.fixture(
    params=CLIENTS,
    config=ClientServerConfig(server_command=[COLLC, "lsp"]),
)
async def client(request, lsp_client: LanguageClient):
    caps = client_capabilities(request.param)
    await lsp_client.initialize_session(types.InitializeParams(capabilities=caps))
    yield
    await lsp_client.shutdown_session()


def position(needle: str, shift: int = 0) -> types.Position:
    """Line and UTF-16 column of the first occurrence of `needle` in the fixture."""
    for i, line in enumerate(FIXTURE.read_text().splitlines()):
        col = line.find(needle)
        if col >= 0:
            prefix = line[: col + shift]
            return types.Position(line=i, character=len(prefix.encode("utf-16-le")) // 2)
    raise AssertionError(f"{needle!r} not in the fixture")


async def open_fixture(client: LanguageClient) -> list[types.Diagnostic]:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=URI, language_id="coll", version=1, text=FIXTURE.read_text()
            )
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[URI])


def at(needle: str, shift: int = 0) -> types.TextDocumentPositionParams:
    return types.TextDocumentPositionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=position(needle, shift)
    )


async def test_diagnostic_with_code(client: LanguageClient):
    diags = await open_fixture(client)
    assert len(diags) == 1, diags
    d = diags[0]
    assert d.code == "E0024"
    assert d.source == "collc"
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.range.start == position("summ")
    assert d.range.end == position("summ", 4)
    assert d.message.startswith("unknown reduction op `summ`")
    assert "help: did you mean `sum`?" in d.message


async def test_hover(client: LanguageClient):
    await open_fixture(client)
    p = at("ring(n:", 1)
    h = await client.text_document_hover_async(
        types.HoverParams(text_document=p.text_document, position=p.position)
    )
    assert h is not None
    assert isinstance(h.contents, types.MarkupContent)
    fmt = client.capabilities.text_document.hover.content_format or [types.MarkupKind.PlainText]
    assert h.contents.kind == fmt[0] or h.contents.kind in fmt
    assert "generator ring(n: int, bw: bandwidth, lat: time = 0 ns)" in h.contents.value
    p = at("n: n", 3)
    h = await client.text_document_hover_async(
        types.HoverParams(text_document=p.text_document, position=p.position)
    )
    assert "param n: int = 8" in h.contents.value and "value: 8" in h.contents.value


async def test_definition(client: LanguageClient):
    await open_fixture(client)
    p = at("n: n", 3)
    r = await client.text_document_definition_async(
        types.DefinitionParams(text_document=p.text_document, position=p.position)
    )
    loc = r[0] if isinstance(r, list) else r
    assert loc.uri == URI
    assert loc.range.start == position("n: int")
    p = at("ring(n:", 1)
    r = await client.text_document_definition_async(
        types.DefinitionParams(text_document=p.text_document, position=p.position)
    )
    loc = r[0] if isinstance(r, list) else r
    assert loc.uri.endswith("/ring.coll"), loc.uri
    path = pathlib.Path(loc.uri.removeprefix("file://"))
    line = path.read_text().splitlines()[loc.range.start.line]
    assert line.startswith("generator ring("), line


async def test_completion(client: LanguageClient):
    await open_fixture(client)
    p = at("summ")
    r = await client.text_document_completion_async(
        types.CompletionParams(text_document=p.text_document, position=p.position)
    )
    items = r.items if isinstance(r, types.CompletionList) else r
    labels = {i.label for i in items}
    assert {"sum", "prod", "min", "max"} <= labels, labels


async def test_symbols(client: LanguageClient):
    await open_fixture(client)
    r = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    names = [s.name for s in r]
    assert names == ["ring", "n", "hosts", "collective allreduce", "schedule ring"], names


async def test_edit_clears_the_diagnostic_and_formatting(client: LanguageClient):
    await open_fixture(client)
    start, end = position("summ"), position("summ", 4)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=start, end=end), text="sum"
                )
            ],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[URI]) == []
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            options=types.FormattingOptions(tab_size=4, insert_spaces=True),
        )
    )
    assert not edits


async def test_unknown_document_is_an_error_response(client: LanguageClient):
    with pytest.raises(Exception) as e:
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri="file:///nowhere/x.coll"),
                position=types.Position(line=0, character=0),
            )
        )
    assert "not open" in str(e.value)
    # The server is still there.
    assert await open_fixture(client)
