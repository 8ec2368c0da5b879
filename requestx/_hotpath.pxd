# What every plain request reads from its client and transport, declared once: Cython checks
# each attribute below at build time, and the compiled steps read them as C fields.


cdef class EnginePlan:
    """What a transport's every request needs from it, fixed when the transport is made
    (`_EngineTransport.__init__`): its engine, HTTP version, TLS settings, route and body
    limit."""
    cdef readonly object engine
    cdef readonly int http_version
    cdef readonly object tls
    cdef readonly object route
    cdef readonly object max_body_bytes


cdef class ClientPlan:
    """What a client's plain requests need from it, rebuilt by `_BaseClient._replan` whenever
    its configuration changes (headers, cookies, auth, event hooks, params, timeout, closing).
    The objects a caller may change in place (the headers, the hook lists, the cookie jar)
    are held here and looked at on every request."""
    cdef readonly bint plain             # configured for the plain path (plan_for says when)
    cdef readonly object transport       # the client's own engine transport, or None
    cdef readonly EnginePlan engine_plan  # its EnginePlan, or None
    cdef readonly tuple timeout_ms       # the client's timeouts, as the engine takes them
    cdef readonly dict timeout_dict      # ... and as the "timeout" extension says them
    cdef readonly object headers         # the client's Headers
    cdef readonly list request_hooks
    cdef readonly list response_hooks
    cdef readonly object cookie_jar      # the client's CookieJar
    cdef readonly bint custom_encoding   # default_encoding is not "utf-8"
