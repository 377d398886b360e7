/* One sanitiser per sink (core/sanitize.h). Expected outputs are written out by
 * hand from the rules in the header. */
#include <string.h>

#include "core/sanitize.h"
#include "core/util.h"
#include "tests/tap.h"

static const char *term(const char *s, bool ascii)
{
    static struct bt_buf b;
    bt_buf_reset(&b);
    bt_san_term_buf(&b, s, ascii);
    return bt_buf_str(&b);
}

static const char *csv(const char *s)
{
    static struct bt_buf b;
    bt_buf_reset(&b);
    bt_san_csv_buf(&b, s);
    return bt_buf_str(&b);
}

static const char *json(const char *s)
{
    static struct bt_buf b;
    bt_buf_reset(&b);
    bt_san_json_text(&b, s);
    return bt_buf_str(&b);
}

static const char *prom(const char *s)
{
    static struct bt_buf b;
    bt_buf_reset(&b);
    bt_san_prom_label_buf(&b, s);
    return bt_buf_str(&b);
}

static const char *utf8(const char *s)
{
    static struct bt_buf b;
    bt_buf_reset(&b);
    bt_san_utf8_buf(&b, s);
    return bt_buf_str(&b);
}

/* Issue 37 break 11: what reaches cairo is valid UTF-8; a cut never halves a character. */
static void test_cairo_text(void)
{
    STREQ(utf8("tri\xe9ge\x80"), "tri\xef\xbf\xbdge\xef\xbf\xbd",
          "r4 break 11: cairo text: a Latin-1 byte and a stray continuation become U+FFFD");
    STREQ(utf8("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac", "r4 break 11: valid UTF-8 kept");
    STREQ(utf8("a\x1b[2J\xc2\x9b"), "a\xef\xbf\xbd[2J\xef\xbf\xbd", "r4 break 11: C0 and C1 controls too");
    STREQ(utf8("ab\xc3"), "ab\xef\xbf\xbd", "r4 break 11: a truncated tail becomes U+FFFD");
    STREQ(utf8(NULL), "", "cairo text: NULL is empty");
    char name[64], big[80];
    memset(big, 'x', 62);
    memcpy(big + 62, "\xc3\xa9tail", 7); /* "é" spans bytes 62 and 63 */
    bt_strlcpy(name, big, sizeof name);
    OK(strlen(name) == 62, "r4 break 11: a 63-byte cut falls before the character it would halve (%zu)", strlen(name));
    bt_strlcpy(name, "short \xc3\xa9", sizeof name);
    STREQ(name, "short \xc3\xa9", "bt_strlcpy: what fits is copied whole");
}

int main(void)
{
    test_cairo_text();
    /* The red-team string: ESC [2J (clear), OSC 0;PWNED BEL (retitle). */
    STREQ(term("evil\x1b[2J\x1b]0;PWNED\amodel", false), "evil?[2J?]0;PWNED?model",
          "terminal: ESC and BEL become ?");
    STREQ(term("a\x7f" "b\r\nc", false), "a?b??c", "terminal: DEL, CR, LF become ?");
    /* U+009B (CSI as C1) is C2 9B: one '?' for the whole sequence */
    STREQ(term("x\xc2\x9b" "31my", false), "x?31my", "terminal: C1 CSI becomes one ?");
    /* "é" (C3 A9) kept, or '?' in ASCII mode; a lone continuation byte is '?' */
    STREQ(term("caf\xc3\xa9", false), "caf\xc3\xa9", "terminal: valid UTF-8 kept");
    STREQ(term("caf\xc3\xa9", true), "caf?", "terminal: ASCII-only replaces UTF-8");
    STREQ(term("a\x80z", false), "a?z", "terminal: stray continuation byte");
    /* overlong '/' (C0 AF) and a UTF-16 surrogate (ED A0 80) are not valid UTF-8 */
    STREQ(term("\xc0\xaf", false), "??", "terminal: overlong form rejected");
    STREQ(term("\xed\xa0\x80", false), "???", "terminal: surrogate rejected");
    STREQ(term(NULL, false), "", "terminal: NULL is empty");
    OK(bt_san_term_clean("us.anthropic.claude-sonnet-4-5"), "clean model id");
    OK(!bt_san_term_clean("a\x1b"), "ESC is not clean");

    char small[6];
    STREQ(bt_san_term(small, sizeof small, "ab\xc3\xa9\xc3\xa9"), "ab\xc3\xa9",
          "fixed buffer cut on a character boundary (5 bytes max)");
    STREQ(bt_san_term(small, sizeof small, "\x1b[2Jxyz"), "?[2Jx", "fixed buffer: ESC replaced, cut at 5 bytes");

    STREQ(csv("triage"), "\"triage\"", "csv: always quoted");
    STREQ(csv("us-east-1,x"), "\"us-east-1,x\"", "csv: comma stays inside the quotes");
    STREQ(csv("say \"hi\""), "\"say \"\"hi\"\"\"", "csv: quotes doubled");
    STREQ(csv("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"",
          "csv: formula neutralised with an apostrophe");
    STREQ(csv("+1"), "\"'+1\"", "csv: leading +");
    STREQ(csv("-2"), "\"'-2\"", "csv: leading -");
    STREQ(csv("@SUM(A1)"), "\"'@SUM(A1)\"", "csv: leading @");
    STREQ(csv("a\nb"), "\"a?b\"", "csv: newline cannot break the row");

    STREQ(prom("a\"b\\c\nd"), "a\\\"b\\\\c\\nd", "prometheus: \\\" \\\\ \\n escaped");
    STREQ(prom("x\x1b[2J"), "x?[2J", "prometheus: ESC replaced");

    OK(bt_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80") == 4, "4-byte UTF-8 (U+1F600)");
    OK(bt_utf8_len((const unsigned char *)"\xf4\x90\x80\x80") == 0, "above U+10FFFF rejected");
    /* JSON text as cJSON prints it: C0 already escaped; DEL, C1 and bad bytes are not */
    STREQ(json("{\"a\":\"x\x7fy\"}"), "{\"a\":\"x\\u007fy\"}", "json: DEL escaped");
    STREQ(json("{\"a\":\"x\xc2\x9b" "31m\"}"), "{\"a\":\"x\\u009b31m\"}", "json: C1 CSI escaped");
    STREQ(json("{\"a\":\"\xff\"}"), "{\"a\":\"\\ufffd\"}", "json: invalid UTF-8 becomes U+FFFD");
    STREQ(json("{\"a\":\"caf\xc3\xa9\"}"), "{\"a\":\"caf\xc3\xa9\"}", "json: valid UTF-8 kept");
    STREQ(json("\x7f\x7f" "ab\x7f"), "\\u007f\\u007fab\\u007f", "json: DEL at the ends and twice");

    /* a JSON string as bedtop writes request bodies: quote, backslash and C0 escaped,
     * runs between them as they are */
    struct bt_buf b = {0};
    bt_buf_json_str(&b, "a\"b\\c\x01" "d\x1f");
    STREQ(bt_buf_str(&b), "\"a\\\"b\\\\c\\u0001d\\u001f\"", "json string: \\\" \\\\ \\u0001 \\u001f");
    bt_buf_reset(&b);
    bt_buf_json_str(&b, "");
    STREQ(bt_buf_str(&b), "\"\"", "json string: empty");
    bt_buf_reset(&b);
    bt_buf_put_int(&b, 0);
    bt_buf_putc(&b, ' ');
    bt_buf_put_int(&b, -1796083200);
    bt_buf_putc(&b, ' ');
    bt_buf_put_int(&b, (-9223372036854775807LL - 1));
    STREQ(bt_buf_str(&b), "0 -1796083200 -9223372036854775808", "put_int: 0, negative, the least int64");
    bt_buf_free(&b);
    return tap_done();
}
