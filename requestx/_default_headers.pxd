# Declared for _hotpath.pyx, which calls it in C (`cimport`).
cpdef add_default_headers(list entries, method, url, body_headers)
