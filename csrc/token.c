/* RFC 9110 token characters (see token.h): its own file, so that head.c and its fuzzer
 * (fuzz/c/head_fuzzer.c) need no more of the engine than they use. */
#include "token.h"

const unsigned char rx_token_chars[256] = {
    ['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1,
    ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
};
