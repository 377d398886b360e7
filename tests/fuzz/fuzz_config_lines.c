/* The config loader against hostile long lines (issue 26 break 7): the input is a
 * script of lines, each "<n>|<text>" repeating <text> to about n bytes (n up to
 * 70,000), so lines straddle the 8,190-byte limit and inih's buffer sizes. A line
 * over the limit must be refused naming its line, never split: so a directive
 * placed past the limit (a key after a long comment) never takes effect. */
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"
#include "io/conffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_buf b = {0};
    const char *p = (const char *)data, *end = p + size;
    bool too_long = false;
    while (p < end && b.len < (1u << 20)) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *bar = memchr(p, '|', (size_t)(e - p));
        size_t start = b.len;
        if (bar && bar > p && bar - p <= 5) {
            long n = 0;
            for (const char *q = p; q < bar && n >= 0; q++)
                n = (*q >= '0' && *q <= '9') ? n * 10 + (*q - '0') : -1;
            size_t tl = (size_t)(e - bar - 1);
            if (n > 0 && tl > 0) {
                if (n > 70000)
                    n = 70000;
                while (b.len - start < (size_t)n)
                    bt_buf_add(&b, bar + 1, tl);
            } else {
                bt_buf_add(&b, p, (size_t)(e - p));
            }
        } else {
            bt_buf_add(&b, p, (size_t)(e - p));
        }
        size_t len = b.len - start;
        if (memchr(b.buf + start, '\0', len)) /* a NUL ends the C string: stop there */
            break;
        if (len > BT_CONFIG_MAX_LINE)
            too_long = true;
        bt_buf_putc(&b, '\n');
        p = nl ? nl + 1 : end;
    }
    char *text = bt_xstrdup(bt_buf_str(&b));
    bt_buf_free(&b);
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    bool ok = bt_config_parse_string(&c, text, "fuzz.conf", err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    /* a line over the limit was read, or refused for another reason first (only the
     * burndown table, read before any line, may come first) */
    if (too_long && (ok || (!strstr(err, "line longer than") && !strstr(err, "burndown"))))
        abort();
    bt_config_free(&c);
    free(text);
    return 0;
}
