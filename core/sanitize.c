/* See sanitize.h: one sanitiser per sink for outside strings. */
#include "core/sanitize.h"
#include "core/util.h"

#include <string.h>

int bt_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c == 0) return 0;
    if (c < 0x80) return 1;
    int n;
    unsigned min;
    if ((c & 0xe0) == 0xc0) { n = 2; c &= 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { n = 3; c &= 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { n = 4; c &= 0x07; min = 0x10000; }
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    return n;
}

/* C1 controls U+0080..U+009F are encoded as C2 80..C2 9F. */
static bool is_c1(const unsigned char *s, int n)
{
    return n == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* Appends the character at p as it may be shown ('?' for a control byte, a C1 control,
 * invalid UTF-8, or any non-ASCII when ascii_only); returns the next character. */
static const unsigned char *put_safe(struct bt_buf *b, const unsigned char *p, bool ascii_only)
{
    if (*p < 0x80) {
        bt_buf_putc(b, (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p);
        return p + 1;
    }
    int n = bt_utf8_len(p);
    if (n == 0 || ascii_only || is_c1(p, n))
        bt_buf_putc(b, '?');
    else
        bt_buf_add(b, p, (size_t)n);
    return p + (n ? n : 1);
}

void bt_san_term_buf(struct bt_buf *b, const char *s, bool ascii_only)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p)
        p = put_safe(b, p, ascii_only);
}

void bt_san_utf8_buf(struct bt_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        int n = bt_utf8_len(p);
        if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) || is_c1(p, n))
            bt_buf_puts(b, "\xef\xbf\xbd"); /* U+FFFD REPLACEMENT CHARACTER */
        else
            bt_buf_add(b, p, (size_t)n);
        p += n ? n : 1;
    }
}

void bt_san_md_buf(struct bt_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        if (*p < 0x80 && strchr("\\`*_[]<>|!~&", *p))
            bt_buf_putc(b, '\\');
        p = put_safe(b, p, false);
    }
}

char *bt_san_term(char *out, size_t n, const char *s)
{
    if (n == 0) return out;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t o = 0;
    while (*p) {
        if (*p < 0x80) {
            if (o + 1 >= n) break;
            out[o++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p;
            p++;
            continue;
        }
        int k = bt_utf8_len(p);
        if (k == 0 || is_c1(p, k)) {
            if (o + 1 >= n) break;
            out[o++] = '?';
            p += k ? k : 1;
            continue;
        }
        if (o + (size_t)k >= n) break;
        memcpy(out + o, p, (size_t)k);
        o += (size_t)k;
        p += k;
    }
    out[o] = 0;
    return out;
}

bool bt_san_term_clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        if (*p < 0x80) {
            if (*p < 0x20 || *p == 0x7f) return false;
            p++;
            continue;
        }
        int n = bt_utf8_len(p);
        if (n == 0 || is_c1(p, n)) return false;
        p += n;
    }
    return true;
}

void bt_san_csv_buf(struct bt_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    bt_buf_putc(b, '"');
    if (*p == '=' || *p == '+' || *p == '-' || *p == '@' || *p == '\t' || *p == '\r')
        bt_buf_putc(b, '\'');
    while (*p) {
        const unsigned char *q = p; /* a run of printable ASCII but '"', appended at once */
        while (*q >= 0x20 && *q < 0x7f && *q != '"')
            q++;
        if (q > p) {
            bt_buf_add(b, p, (size_t)(q - p));
            p = q;
        } else if (*p == '"') {
            bt_buf_puts(b, "\"\"");
            p++;
        } else {
            p = put_safe(b, p, false);
        }
    }
    bt_buf_putc(b, '"');
}

void bt_label_escape_buf(struct bt_buf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            bt_buf_putc(b, '\\');
        if (*p == '\n')
            bt_buf_puts(b, "\\n");
        else
            bt_buf_putc(b, *p);
    }
}

void bt_san_prom_label_buf(struct bt_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        const unsigned char *q = p; /* a run of printable ASCII but '\\' and '"', at once */
        while (*q >= 0x20 && *q < 0x7f && *q != '\\' && *q != '"')
            q++;
        if (q > p) {
            bt_buf_add(b, p, (size_t)(q - p));
            p = q;
            continue;
        }
        const char *esc = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
        if (esc) {
            bt_buf_puts(b, esc);
            p++;
        } else {
            p = put_safe(b, p, false);
        }
    }
}

void bt_san_json_text(struct bt_buf *b, const char *json)
{
    const unsigned char *p = (const unsigned char *)(json ? json : "");
    while (*p) {
        if (*p < 0x80) {
            const unsigned char *q = p; /* a run of plain ASCII, appended at once */
            while (*q && *q < 0x7f)
                q++;
            if (q > p) {
                bt_buf_add(b, p, (size_t)(q - p));
                p = q;
                continue;
            }
            if (*p == 0x7f) {
                bt_buf_puts(b, "\\u007f");
                p++;
                continue;
            }
        }
        int n = bt_utf8_len(p);
        if (n == 0) {
            bt_buf_puts(b, "\\ufffd"); /* only inside strings: JSON's syntax is ASCII */
            p++;
        } else if (is_c1(p, n)) {
            bt_buf_printf(b, "\\u%04x", p[1]);
            p += n;
        } else {
            bt_buf_add(b, p, (size_t)n);
            p += n;
        }
    }
}
