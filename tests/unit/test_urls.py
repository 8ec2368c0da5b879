"""URL and QueryParams: differential tests against httpx, plus requestx's strict rules."""

from __future__ import annotations

import pickle
import typing

import httpx
import pytest

from requestx._exceptions import InvalidURL
from requestx._urls import _FAST_URL, URL, QueryParams, _parse

# --- Differential corpus -------------------------------------------------------------

# Parsed by both libraries; every component must agree.
URL_CORPUS = [
    "http://127.0.0.1:8080/json?a=1",
    "https://example.com",
    "https://example.com/",
    "http://example.com:80/",
    "https://example.com:443/x",
    "http://example.com:8080",
    "http://example.com:/",
    "ws://h:80/",
    "wss://h:443/",
    "ftp://h:21/",
    "http://Example.COM/Path",
    "HTTPS://jo%40email.com:a%20secret@müller.de:1234/pa%20th?search=ab#anchorlink",
    "http://u:p@h/",
    "http://user@h/",
    "http://:pw@h/",
    "http://a@b@c/",
    "http://u:p:q@h/",
    "http://[::1]:8080/x",
    "http://[::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[::ffff:192.168.0.1]/",
    "http://1.2.3.4/",
    "http://0.0.0.0:1/",
    "http://255.255.255.255/",
    "http://1.2.3/",
    "http://1.2.3.4.5/",
    "http://h/a b?c d#e f",
    "http://h/ü?ü=ü#ü",
    "http://h/%zz?%#%",
    "http://h/a%2Fb",
    "http://h/{x}`y`|z^[]",
    "http://h/?q={x}`'|^[]",
    "http://h/#a#b`{}",
    'http://h/"<>?"<>#"<>',
    "http://h/a;b=c/d,e",
    "http://h/a/./b/../c",
    "http://h/./a",
    "http://h/.well-known/x",
    "http://h/a..b/c.",
    "http://h?",
    "http://h#",
    "http://h?#",
    "http://h/?a=1&b=2&a=3",
    "http://h/?a&b=&=c",
    "http://h/path?q=a+b%20c",
    "http://xn--fiqs8s.icom.museum/",
    "http://中国.icom.museum",
    "http://MÜLLER.de/",
    "http://h_x.example/",
    "http://*.example.com/",
    "http://h/~user/",
    "http://h:65535/",
    "http://h:0/",
    "http://h:0080/",
    "http://h:0880/",  # str() is ":880" (found by fuzz/python/url_fuzzer.py)
    "http://h:00/",
    "https://h//double//slashes",
    "http://",
    "http:///path",
    "http:",
    "mailto:someone@example.com",
    "urn:isbn:123",
    "localhost:8080",
    "/relative/path?x=1#f",
    "relative/path",
    "rel ative",
    "",
    "?q=1",
    "#frag",
    "//example.com/x",
    "a_b:c",
    "../up",
]


def _components(url: typing.Any) -> tuple[typing.Any, ...]:
    return (
        str(url),
        url.scheme,
        url.raw_scheme,
        url.userinfo,
        url.username,
        url.password,
        url.host,
        url.raw_host,
        url.port,
        url.netloc,
        url.path,
        url.query,
        url.raw_path,
        url.fragment,
        url.is_absolute_url,
        url.is_relative_url,
        sorted(url.params.multi_items()),
    )


@pytest.mark.parametrize("text", URL_CORPUS)
def test_url_components_match_httpx(text: str) -> None:
    assert _components(URL(text)) == _components(httpx.URL(text))


@pytest.mark.parametrize("text", URL_CORPUS)
def test_url_equality_hash_and_repr_match_httpx(text: str) -> None:
    ours, theirs = URL(text), httpx.URL(text)
    assert ours == text or str(httpx.URL(text)) != text
    assert ours == URL(str(ours))
    assert hash(ours) == hash(URL(str(ours)))
    assert repr(ours) == repr(theirs)


# Places where requestx deliberately differs from httpx 0.28 (see the module docs).
DELIBERATE_DIFFERENCES = [
    # Default ports are recognised after lower-casing the scheme (httpx keeps ":80").
    ("HTTP://a:80/", "http://a/"),
    # RFC 3986 remove_dot_segments keeps the slash a trailing ".." leaves behind.
    ("http://h/a/b/..", "http://h/a/"),
    ("http://h/a/b/.", "http://h/a/b/"),
    ("http://h/..", "http://h/"),
]


@pytest.mark.parametrize(("text", "expected"), DELIBERATE_DIFFERENCES)
def test_deliberate_differences(text: str, expected: str) -> None:
    assert str(URL(text)) == expected
    assert str(httpx.URL(text)) != expected  # still a difference: revisit if httpx changes


def test_host_decodes_every_punycode_label() -> None:
    # httpx only decodes a host that *starts* with "xn--".
    url = URL("http://www.müller.de/")
    assert url.host == "www.müller.de"
    assert url.raw_host == b"www.xn--mller-kva.de"
    assert URL("http://xn--fiqs8s.icom.museum").host == "中国.icom.museum"
    # Not valid punycode: shown as written rather than raising.
    assert URL("http://xn--zz--.example/").host == "xn--zz--.example"


# --- The fast path agrees with the general parser ------------------------------------

FAST_PATH_URLS = [
    "http://127.0.0.1:8080/json?a=1",
    "https://api.example.com/v1/users/123?fields=name,email&limit=10",
    "http://Example.COM/Path",
    "HTTP://h/",
    "http://h:80/",
    "https://h:443",
    "http://h:/x",
    "http://h:0080/",
    "http://h:0880/",  # str() is ":880" (found by fuzz/python/url_fuzzer.py)
    "http://h:00/",
    "http://h/a/./b/../c",
    "http://h/.well-known/x",
    "http://h/a/b/..",
    "http://h?",
    "http://h#",
    "http://h/?a=1&a=2#frag",
    "http://h/%zz?%#%",
    "http://h/|^[]!$&'()*+,;=:@?q={x}`'|^[]?#a#b{}",
    "ws://h:80/",
    "http://h_x.example/~u/",
    "http://1.2.3/",
    "http://255.255.255.255/",
]


@pytest.mark.parametrize("text", FAST_PATH_URLS)
def test_fast_path_matches_general_parser(text: str) -> None:
    assert _FAST_URL(text) is not None, "corpus entry should take the fast path"
    fast = URL(text)
    slow = URL._from_parts(*_parse(text, {}))
    assert fast._parts() == slow._parts()
    assert str(fast) == str(slow)


@pytest.mark.parametrize(
    "text",
    ["http://u@h/", "http://[::1]/", "http://müller.de/", "http://h/a b", "http:///x", "/x"],
)
def test_fast_path_declines_what_needs_the_general_parser(text: str) -> None:
    assert _FAST_URL(text) is None


def test_fast_path_validates_ipv4_and_ports() -> None:
    with pytest.raises(InvalidURL):
        URL("http://256.1.1.1/")
    with pytest.raises(InvalidURL):
        URL("http://01.2.3.4/")
    with pytest.raises(InvalidURL):
        URL("http://h:65536/")


# --- Strict rejections ---------------------------------------------------------------

CONTROL_CHARS = ["\r", "\n", "\r\n", "\x00", "\t", "\x0b", "\x1f", "\x7f"]


@pytest.mark.parametrize("char", CONTROL_CHARS)
@pytest.mark.parametrize(
    "template",
    [
        "http://h/pa{}th",
        "http://h/?q=a{}b",
        "http://h/#fr{}ag",
        "http://h{}x/",
        "http://u{}ser:pw@h/",
        "http://h:80{}/",
        "http{}://h/",
        "/relative{}path",
        "http://h/{}",
        "{}http://h/",
    ],
)
def test_control_characters_anywhere_are_rejected(template: str, char: str) -> None:
    with pytest.raises(InvalidURL):
        URL(template.format(char))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"path": "/a\r\nHost: evil"},
        {"query": b"a=1\r\nX: y"},
        {"fragment": "f\x00"},
        {"host": "h\nx"},
        {"raw_path": b"/a\r\n"},
        {"scheme": "ht\ntp"},
    ],
)
def test_control_characters_in_components_are_rejected(kwargs: dict[str, typing.Any]) -> None:
    with pytest.raises(InvalidURL):
        URL("http://h/").copy_with(**kwargs)


def test_control_characters_in_credentials_are_escaped() -> None:
    # username/password are decoded values (like params): they get percent-encoded,
    # as in httpx, so nothing raw reaches the wire.
    url = URL("http://h/").copy_with(username="u\r\n", password="p\x00")
    assert url.userinfo == b"u%0D%0A:p%00"
    assert url.username == "u\r\n"


def test_header_smuggling_through_params_is_escaped_not_sent() -> None:
    # Params are percent-encoded, so CR/LF in a value cannot reach the wire raw.
    url = URL("http://h/", params={"q": "a\r\nX-Evil: 1"})
    assert b"\r" not in url.raw_path and b"\n" not in url.raw_path
    assert url.params["q"] == "a\r\nX-Evil: 1"


@pytest.mark.parametrize(
    "text",
    [
        "http://h:99999/",
        "http://h:65536/",
        "http://h:-1/",
        "http://h:8_0/",
        "http://h:+80/",
        "http://h: 80/",
        "http://h:٨٠/",
        "http://h:abc/",
        "http://h:80:80/",
        "http://[::1]80/",
        "http://h:000000/",  # more than 5 digits, on the fast path too (fuzz/corpus/url/)
        "http://h:000080/x",
    ],
)
def test_invalid_ports_are_rejected(text: str) -> None:
    with pytest.raises(InvalidURL):
        URL(text)


def test_port_keyword_out_of_range_is_rejected() -> None:
    with pytest.raises(InvalidURL):
        URL("http://h/", port=70000)


@pytest.mark.parametrize(
    "text",
    [
        "http://exa mple.com/",
        "http://a<b/",
        "http://a>b/",
        "http://a|b/",
        "http://a\\b/",
        "http://a^b/",
        "http://a{b/",
        'http://a"b/',
        "http://a`b/",
        "http://a[b/",
        "http://256.1.1.1/",
        "http://1.2.3.04/",
        "http://[::g]/",
        "http://[1.2.3.4]/",
        "http://[::1/",
        "http://[::1%eth 0]/",  # a zone id is a host name's characters (fuzz/corpus/url/)
        "http://[::1%2\xff]/",
        "http://[fe80::1%\u00fc]:80/",
        "http://xn--ü.com/",
        "http://a..ü/",
    ],
)
def test_invalid_hosts_are_rejected(text: str) -> None:
    with pytest.raises(InvalidURL):
        URL(text)


@pytest.mark.parametrize(
    "text", ["//", "//x", ":relative", "http://h" + "/a" * 40000, "http://h/" + "a" * 70000]
)
def test_structural_errors_match_httpx(text: str) -> None:
    try:
        httpx.URL(text)
    except httpx.InvalidURL:
        expected_error = True
    else:
        expected_error = False
    if expected_error:
        with pytest.raises(InvalidURL):
            URL(text)
    else:
        assert str(URL(text)) == str(httpx.URL(text))


def test_absolute_url_with_path_not_starting_with_slash_is_rejected() -> None:
    with pytest.raises(InvalidURL):
        URL("http://h/").copy_with(path="relative")
    with pytest.raises(httpx.InvalidURL):
        httpx.URL("http://h/").copy_with(path="relative")


# --- Keyword arguments and copies ----------------------------------------------------

COPY_CASES: list[dict[str, typing.Any]] = [
    {"scheme": "https"},
    {"scheme": "HTTPS"},
    {"host": "other.org"},
    {"host": "Müller.de"},
    {"host": "::1"},
    {"host": "[::1]"},
    {"port": 8443},
    {"port": None},
    {"path": "/a b/c"},
    {"path": "/x/../y"},
    {"query": b"a=1&b=2"},
    {"query": None},
    {"fragment": "top"},
    {"fragment": None},
    {"username": "jo@mail", "password": "s e:cret"},
    {"username": "only"},
    {"password": "only"},
    {"username": None, "password": None},
    {"userinfo": b"a:b"},
    {"netloc": b"other:8080"},
    {"netloc": b"other"},
    {"raw_path": b"/p?q=1"},
    {"raw_path": b"/p"},
    {"params": {"a": "1", "b": ["2", "3"]}},
    {"params": {}},
    {"params": "x=1&y=2"},
    {"params": [("a", True), ("b", None), ("c", 1.5)]},
]


@pytest.mark.parametrize("base", ["https://u:p@example.com:8080/a/b?x=1#f", "http://h/"])
@pytest.mark.parametrize("kwargs", COPY_CASES)
def test_copy_with_matches_httpx(base: str, kwargs: dict[str, typing.Any]) -> None:
    ours = URL(base).copy_with(**kwargs)
    theirs = httpx.URL(base).copy_with(**kwargs)
    assert _components(ours) == _components(theirs)
    # Keyword arguments to the constructor behave the same as copy_with.
    assert URL(base, **kwargs) == ours


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"bogus": "x"}, TypeError),
        ({"port": "80"}, TypeError),
        ({"query": "a=1"}, TypeError),
        ({"path": b"/x"}, TypeError),
        ({"path": "/a?b"}, InvalidURL),
        ({"query": b"a#b"}, InvalidURL),
        ({"userinfo": b"a@b"}, InvalidURL),
        ({"host": "a:b:c]"}, InvalidURL),
    ],
)
def test_copy_with_errors(kwargs: dict[str, typing.Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        URL("http://h/").copy_with(**kwargs)


def test_url_type_errors() -> None:
    with pytest.raises(TypeError):
        URL(123)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        URL(b"http://h/")  # type: ignore[arg-type]


def test_url_from_url_is_equal_and_keeps_components() -> None:
    url = URL("http://u:p@h:81/a?b#c")
    copy = URL(url)
    assert copy == url and copy._parts() == url._parts()


@pytest.mark.parametrize(
    ("method", "args"),
    [
        ("copy_set_param", ("a", "9")),
        ("copy_set_param", ("new", None)),
        ("copy_add_param", ("a", "9")),
        ("copy_add_param", ("new", True)),
        ("copy_remove_param", ("a",)),
        ("copy_remove_param", ("missing",)),
        ("copy_merge_params", ({"a": "9", "c": "3"},)),
        ("copy_merge_params", ("b=7",)),
    ],
)
def test_param_copies_match_httpx(method: str, args: tuple[typing.Any, ...]) -> None:
    base = "http://h/p?a=1&b=2"
    ours = getattr(URL(base), method)(*args)
    theirs = getattr(httpx.URL(base), method)(*args)
    assert ours.copy_with(query=None) == str(theirs.copy_with(query=None))
    # Same parameters; the order may differ where httpx groups repeated keys.
    assert sorted(ours.params.multi_items()) == sorted(theirs.params.multi_items())


def test_raw_gives_the_request_target() -> None:
    raw = URL("https://Example.com:8443/a b?q=1#frag").raw
    assert raw.raw_path == b"/a%20b?q=1"
    assert raw == (b"https", b"example.com", 8443, b"/a%20b?q=1")
    assert URL("http://h").raw == (b"http", b"h", None, b"/")


def test_url_is_picklable() -> None:
    url = URL("https://u:p@müller.de:99/a?b=1#c")
    assert pickle.loads(pickle.dumps(url)) == url


def test_equality_with_other_types() -> None:
    assert URL("http://h/") == "http://h/"
    assert URL("http://h/") == "http://h:80/"
    assert URL("http://h/") != "http://h\r\n/"  # invalid: unequal, not an exception
    assert URL("http://h/") != 1
    assert URL("http://h/") != httpx.URL("http://h/")


def test_repr_hides_the_password() -> None:
    assert repr(URL("http://user:secret@h/")) == "URL('http://user:[secure]@h/')"
    assert "secret" not in repr(URL("http://user:secret@h/"))


# --- join ----------------------------------------------------------------------------

RFC3986_BASE = "http://a/b/c/d;p?q"

# RFC 3986 section 5.4 examples (normal and abnormal), and their expected results.
RFC3986_EXAMPLES = [
    ("g:h", "g:h"),
    ("g", "http://a/b/c/g"),
    ("./g", "http://a/b/c/g"),
    ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"),
    ("//g", "http://g"),
    ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"),
    ("#s", "http://a/b/c/d;p?q#s"),
    ("g#s", "http://a/b/c/g#s"),
    ("g?y#s", "http://a/b/c/g?y#s"),
    (";x", "http://a/b/c/;x"),
    ("g;x", "http://a/b/c/g;x"),
    ("g;x?y#s", "http://a/b/c/g;x?y#s"),
    ("", "http://a/b/c/d;p?q"),
    (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"),
    ("..", "http://a/b/"),
    ("../", "http://a/b/"),
    ("../g", "http://a/b/g"),
    ("../..", "http://a/"),
    ("../../", "http://a/"),
    ("../../g", "http://a/g"),
    ("../../../g", "http://a/g"),
    ("../../../../g", "http://a/g"),
    ("/./g", "http://a/g"),
    ("/../g", "http://a/g"),
    ("g.", "http://a/b/c/g."),
    (".g", "http://a/b/c/.g"),
    ("g..", "http://a/b/c/g.."),
    ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"),
    ("./g/.", "http://a/b/c/g/"),
    ("g/./h", "http://a/b/c/g/h"),
    ("g/../h", "http://a/b/c/h"),
    ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("g;x=1/../y", "http://a/b/c/y"),
    ("g?y/./x", "http://a/b/c/g?y/./x"),
    ("g?y/../x", "http://a/b/c/g?y/../x"),
    ("g#s/./x", "http://a/b/c/g#s/./x"),
    ("g#s/../x", "http://a/b/c/g#s/../x"),
    ("http:g", "http://a/b/c/g"),  # the "non-strict" rule, as urljoin and httpx
]


@pytest.mark.parametrize(("reference", "expected"), RFC3986_EXAMPLES)
def test_join_follows_rfc3986(reference: str, expected: str) -> None:
    assert str(URL(RFC3986_BASE).join(reference)) == expected


@pytest.mark.parametrize(
    ("base", "reference"),
    [
        ("https://example.com/a/b", "/new/path"),
        ("https://example.com/a/b", "c?x=1"),
        ("https://example.com/a/b/", "c"),
        ("https://example.com", "c"),
        ("https://example.com/a?q=1", "#frag"),
        ("https://example.com/a", "https://other.org/x"),
        ("https://example.com/a", "http://other.org/x"),
        ("https://example.com/a", "//other.org/x"),
        ("http://example.com/a", "//other.org:80/x"),  # the base's default port (fuzz/)
        ("https://example.com/a", "//other.org:80/x"),
        ("https://u:p@example.com:8443/a/b", "../c"),
        ("http://h/a/b", URL("c d")),
    ],
)
def test_join_matches_httpx(base: str, reference: typing.Any) -> None:
    theirs_ref = httpx.URL(str(reference)) if isinstance(reference, URL) else reference
    assert str(URL(base).join(reference)) == str(httpx.URL(base).join(theirs_ref))


def test_join_keeps_empty_segments_unlike_urljoin() -> None:
    # urllib.parse.urljoin (used by httpx) drops the empty segment; RFC 3986 keeps it.
    assert str(URL("http://a/b//c/d").join("e")) == "http://a/b//c/e"


# --- QueryParams ---------------------------------------------------------------------

QUERY_INPUTS: list[typing.Any] = [
    None,
    "",
    "a=1",
    "a=1&b=2&a=3",
    "a&b=&=c",
    "a=1;b=2",
    "q=a+b%20c&x=%E2%9C%93",
    b"a=1&b=2",
    {"a": "1", "b": ["2", "3"], "c": True, "d": None, "e": 1.5, "f": 0},
    {"a": ("x", "y")},
    [("a", "1"), ("b", "2"), ("a", "3")],
    (("a", "1"), ("b", False)),
    [("num", 3)],
]


def _qp_views(params: typing.Any) -> tuple[typing.Any, ...]:
    return (
        sorted(params.multi_items()),
        sorted(params.keys()),
        sorted(params.items()),
        len(params),
        bool(params),
        sorted(params.get_list(key) for key in params),
        {key: params[key] for key in params},
        {key: params.get(key) for key in params},
        params.get("missing", "dflt"),
        "a" in params,
        "zzz" in params,
    )


@pytest.mark.parametrize("value", QUERY_INPUTS)
def test_query_params_match_httpx(value: typing.Any) -> None:
    ours, theirs = QueryParams(value), httpx.QueryParams(value)
    assert _qp_views(ours) == _qp_views(theirs)
    # Same string whenever httpx's grouping by key does not reorder anything.
    items = ours.multi_items()
    if items == theirs.multi_items():
        assert str(ours) == str(theirs)
        assert repr(ours) == repr(theirs)
    assert QueryParams(str(ours)) == ours


def test_query_params_keep_the_original_order() -> None:
    # A deliberate difference: httpx groups values by key ("a=1&a=3&b=2").
    params = QueryParams("a=1&b=2&a=3")
    assert params.multi_items() == [("a", "1"), ("b", "2"), ("a", "3")]
    assert str(params) == "a=1&b=2&a=3"
    assert str(URL("http://h/", params=params)) == "http://h/?a=1&b=2&a=3"
    assert list(params.keys()) == ["a", "b"]
    assert list(params.values()) == ["1", "2"]
    assert params.get_list("a") == ["1", "3"]


@pytest.mark.parametrize(
    ("operation", "args"),
    [
        ("set", ("a", "9")),
        ("set", ("z", None)),
        ("add", ("a", "9")),
        ("add", ("z", False)),
        ("remove", ("a",)),
        ("remove", ("missing",)),
        ("merge", ({"a": "9"},)),
        ("merge", ({"z": ["8", "9"], "b": "7"},)),
        ("merge", ("a=x&a=y",)),
        ("merge", (None,)),
    ],
)
def test_query_params_operations_match_httpx(operation: str, args: tuple[typing.Any, ...]) -> None:
    base = "a=1&b=2&c=3"
    ours = getattr(QueryParams(base), operation)(*args)
    theirs = getattr(httpx.QueryParams(base), operation)(*args)
    assert sorted(ours.multi_items()) == sorted(theirs.multi_items())
    assert ours == QueryParams(str(theirs))
    if operation != "add":  # add appends; httpx groups the new value with its key
        assert str(ours) == str(theirs)
    assert str(QueryParams(base)) == base  # the original is unchanged


def test_query_params_set_and_merge_place_values_at_first_position() -> None:
    params = QueryParams("a=1&b=2&a=3&c=4")
    assert str(params.set("a", "x")) == "a=x&b=2&c=4"
    assert str(params.merge({"a": ["x", "y"], "d": "5"})) == "a=x&a=y&b=2&c=4&d=5"
    assert str(params.add("a", "5")) == "a=1&b=2&a=3&c=4&a=5"
    assert str(params.remove("a")) == "b=2&c=4"


def test_query_params_equality_and_hash() -> None:
    assert QueryParams("a=1&b=2") == QueryParams("b=2&a=1")
    assert hash(QueryParams("a=1&b=2")) == hash(QueryParams("b=2&a=1"))
    assert QueryParams("a=1") != QueryParams("a=2")
    assert QueryParams("a=1") != "a=1"
    assert QueryParams(QueryParams("a=1")) == QueryParams("a=1")
    assert QueryParams(a="1", b="2") == QueryParams("a=1&b=2")


def test_query_params_are_immutable() -> None:
    params = QueryParams("a=1")
    with pytest.raises(RuntimeError):
        params["a"] = "2"
    with pytest.raises(RuntimeError):
        params.update({"a": "2"})
    with pytest.raises(KeyError):
        params["missing"]


def test_query_params_constructor_errors() -> None:
    with pytest.raises(TypeError):
        QueryParams("a=1", "b=2")
    with pytest.raises(TypeError):
        QueryParams("a=1", b="2")


def test_url_params_property_and_request_params_replace_query() -> None:
    url = URL("http://h/?a=1&b=2")
    assert url.params == QueryParams("a=1&b=2")
    assert str(URL("http://h/?x=1", params={"y": "2"})) == str(
        httpx.URL("http://h/?x=1", params={"y": "2"})
    )


def test_recently_parsed_urls_are_shared_and_the_cache_stays_bounded() -> None:
    from requestx import _urls

    first = _urls.url_from_str("http://example.org/a?b=1")
    assert _urls.url_from_str("http://example.org/a?b=1") is first  # one parse, shared
    assert first == URL("http://example.org/a?b=1")
    for i in range(_urls._RECENT_URLS_MAX * 3):
        _urls.url_from_str(f"http://example.org/{i}")
    assert len(_urls._RECENT_URLS) <= _urls._RECENT_URLS_MAX
    long = "http://example.org/" + "x" * _urls._RECENT_URL_LENGTH
    assert _urls.url_from_str(long) == URL(long)
    assert long not in _urls._RECENT_URLS  # long strings are parsed, not kept
    for _ in range(2):  # an invalid URL is never cached: it raises every time
        with pytest.raises(InvalidURL):
            _urls.url_from_str("http://exa mple.org/")


@pytest.mark.parametrize(
    ("text", "host", "target"),
    [
        ("http://example.org/a?b=1", b"example.org", b"http://example.org/a?b=1"),
        ("HTTP://Example.ORG:80/", b"example.org", b"http://example.org/"),
        ("https://example.org:8443/p", b"example.org:8443", b"https://example.org:8443/p"),
        ("http://[::1]:8080/x", b"[::1]:8080", b"http://[::1]:8080/x"),
        ("http://user:pw@example.org/", b"example.org", b"http://example.org/"),
        ("http://müller.de/ä", b"xn--mller-kva.de", b"http://xn--mller-kva.de/%C3%A4"),
    ],
)
def test_what_the_engine_gets_for_a_url_is_made_once_and_matches_the_url(
    text: str, host: bytes, target: bytes
) -> None:
    # The Host entry and the engine's URL (credentials left out: they travel as the auth
    # flow's header) are cached on the URL, which the client shares between requests.
    url = URL(text)
    assert url._host_entry() == (b"Host", b"host", host) == (b"Host", b"host", url.netloc)
    assert url._host_entry() is url._host_entry()
    assert url._engine_target() == target
    assert url._engine_target() is url._engine_target()
    # A URL made from this one has its own: nothing cached is carried over.
    other = url.copy_with(host="example.net", port=9000)
    assert other._host_entry() == (b"Host", b"host", b"example.net:9000")
    assert other._engine_target().startswith(url.scheme.encode() + b"://example.net:9000/")
    assert pickle.loads(pickle.dumps(url))._engine_target() == target
