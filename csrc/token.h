/* RFC 9110 token characters (method and header field names): digits, letters and
 * !#$%&'*+-.^_`|~. A table, because every request checks every header name it sends and every
 * header line it receives. Defined in token.c. */
#ifndef RX_TOKEN_H
#define RX_TOKEN_H

extern const unsigned char rx_token_chars[256];

static inline int rx_is_token_char(unsigned char c) { return rx_token_chars[c]; }

#endif
