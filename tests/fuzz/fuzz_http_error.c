/* AWS error answers: the JSON/XML body and the x-amzn-query-error header,
 * split at the first NUL byte (header first; no NUL: no header). */
#include <string.h>

#include "aws/policy.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *z = memchr(data, 0, size);
    char *hdr = NULL;
    const char *body = (const char *)data;
    size_t len = size;
    if (z) {
        size_t hl = (size_t)(z - data);
        hdr = bt_xmalloc(hl + 1);
        memcpy(hdr, data, hl);
        hdr[hl] = '\0';
        body = (const char *)z + 1;
        len = size - hl - 1;
    }
    char code[128], msg[256];
    int rc = bt_aws_error_code(body, len, hdr, code, sizeof code, msg, sizeof msg);
    if (rc == 0 && !code[0])
        abort(); /* found means a code */
    for (const char *p = msg; *p; p++)
        if ((unsigned char)*p < 32)
            abort(); /* control characters are replaced: the message reaches the terminal */
    (void)bt_aws_is_throttle_code(code);
    free(hdr);
    return 0;
}
