/* Issue 37 breaks 3 and 13: the one URL parser (net/url.c, curl_url) and the one redactor
 * (bt_url_redact). Every form curl accepts and sends as Basic auth is checked against
 * curl's own reading: the password curl would send never appears in what bedtop shows,
 * neither through the parser nor through the redactor on the raw text (messages that quote
 * the URL as typed), and no query value appears either. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "net/url.h"
#include "tests/tap.h"

/* curl's own password and user for url (NULL if curl refuses it or sees none) */
static char *curl_part(const char *url, CURLUPart part)
{
    CURLU *u = curl_url();
    char *s = NULL, *out = NULL;
    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK && curl_url_get(u, part, &s, 0) == CURLUE_OK && s)
        out = strdup(s);
    curl_free(s);
    curl_url_cleanup(u);
    return out;
}

static const char *const forms[] = {
    "http://bob:hunter2@127.0.0.1:9/x",
    "http:///bob:hunter2@127.0.0.1:9/x",  /* three slashes: curl sends Basic bob:hunter2 */
    "http:/bob:hunter2@127.0.0.1:9/x",    /* one slash: the same */
    "HTTP:///bob:hunter2@127.0.0.1:9",
    "https:/bob:hunter2@127.0.0.1:9?x=1",
    "http://bob;x:hunter2@127.0.0.1:9/",
    "http://bob:hunter2@127.0.0.1:9#f",
    "http://bob:hunter2@[::1]:9/",
    "http://bob:hun%74er2@127.0.0.1:9/",
    "http://hunter2@127.0.0.1:9/",          /* a user alone: maybe a token */
    "http:/hunter2@127.0.0.1:9/",
    "http:/\\\\\\\\@127.0.0.1:9/",          /* a user of backslashes (found by fuzz_url) */
    "http://hunter2\\@127.0.0.1:9/",        /* curl: user "hunter2\\" */
};

static void test_forms(void)
{
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const char *in = forms[i];
        char *pw = curl_part(in, CURLUPART_PASSWORD);
        char *user = curl_part(in, CURLUPART_USER);
        const char *secret = pw ? pw : user; /* a user alone is hidden too */
        OK(secret != NULL, "r4 break 3: curl reads a secret in %s", in);
        char raw[512];
        bt_url_redact(in, raw, sizeof raw);
        OK(secret && !strstr(raw, secret) && strstr(raw, "***@"),
           "r4 break 3: the redactor hides what curl sends as the password of %s (%s)", in, raw);
        struct bt_url u;
        char err[256];
        bool parsed = bt_url_parse(in, &u, err, sizeof err);
        OK(parsed, "r4 break 3: the one parser takes %s as curl does (%s)", in, parsed ? "" : err);
        if (parsed) {
            OK(secret && !strstr(u.shown, secret) && strstr(u.shown, "***@"),
               "r4 break 3: ... and shows it as %s", u.shown);
            OK(!strncmp(u.url, "http", 4) && strstr(u.url, "://"), "r4 break 3: normal form %s", u.url);
            bt_url_free(&u);
        }
        free(pw);
        free(user);
    }
}

static void test_shown(void)
{
    char out[256];
    bt_url_redact("http:///bob:hunter2@127.0.0.1:9/m", out, sizeof out);
    STREQ(out, "http:///bob:***@127.0.0.1:9/m", "r4 break 3: three slashes: user:***@");
    bt_url_redact("http:/bob:hunter2@127.0.0.1:9", out, sizeof out);
    STREQ(out, "http:/bob:***@127.0.0.1:9", "r4 break 3: one slash: user:***@");
    bt_url_redact("prometheus+http:///bob:hunter2@h:1", out, sizeof out);
    STREQ(out, "prometheus+http:///bob:***@h:1", "r4 break 3: --source's scheme");
    bt_url_redact("bob:hunter2@h:1/x", out, sizeof out);
    OK(!strstr(out, "hunter2"), "r4 break 3: no scheme at all (%s)", out);
    /* break 13: query values */
    bt_url_redact("http://h:1/m?token=sekrit&a=1&bare#frag", out, sizeof out);
    STREQ(out, "http://h:1/m?token=***&a=***&***", "r4 break 13: every query value *** (names kept), no #fragment");
    bt_url_redact("http://h:1/m?", out, sizeof out);
    STREQ(out, "http://h:1/m?", "r4 break 13: an empty query stays empty");
    struct bt_url u;
    char err[128];
    OK(bt_url_parse("http://127.0.0.1:9/api?query=up&token=sekrit", &u, err, sizeof err), "parse");
    STREQ(u.shown, "http://127.0.0.1:9/api?query=***&token=***", "r4 break 13: the parser's shown form");
    STREQ(u.query, "query=up&token=sekrit", "the raw query is kept for sending");
    STREQ(u.path, "/api", "path");
    bt_url_free(&u);
    OK(!bt_url_parse("file:///etc/passwd", &u, err, sizeof err) && strstr(err, "only http"), "file: refused (%s)", err);
    OK(!bt_url_parse("http:bob:hunter2@h", &u, err, sizeof err) && !strstr(err, "hunter2"),
       "what curl refuses is refused, the reason without the URL (%s)", err);
}

/* 30,000 URLs mutated from the forms above (slashes, backslashes, @ : ? # % inserted
 * anywhere), deterministic: whenever curl would send a password holding the secret (or a
 * user alone holding it), neither the redactor on the raw text nor the parser shows it. */
static void test_mutations(void)
{
    static const char alphabet[] = "//\\@@::?#%a.1";
    unsigned long x = 12345;
    int sent = 0, leaks = 0;
    char first_leak[300] = "";
    for (int it = 0; it < 30000; it++) {
        char in[160];
        const char *base = it % 2 ? "http://bob:Zq7pw@127.0.0.1:9/p?q=1" : "http:/Zq7tok@127.0.0.1/";
        size_t n = strlen(base), o = 0;
        for (size_t i = 0; i <= n && o + 2 < sizeof in; i++) {
            x = x * 6364136223846793005UL + 1442695040888963407UL;
            if ((x >> 33) % 7 == 0)
                in[o++] = alphabet[(x >> 40) % (sizeof alphabet - 1)];
            if (i < n)
                in[o++] = base[i];
        }
        in[o] = '\0';
        char *pw = curl_part(in, CURLUPART_PASSWORD), *user = curl_part(in, CURLUPART_USER);
        const char *secret_part = pw ? pw : user;
        if (secret_part && strstr(secret_part, "Zq7")) {
            sent++;
            char raw[512];
            bt_url_redact(in, raw, sizeof raw);
            struct bt_url u;
            char err[128];
            bool leak = strstr(raw, "Zq7") != NULL;
            if (bt_url_parse(in, &u, err, sizeof err)) {
                leak |= strstr(u.shown, "Zq7") != NULL;
                bt_url_free(&u);
            }
            if (leak && !leaks++)
                bt_fmt_cut(first_leak, sizeof first_leak, "%s -> %s", in, raw);
        }
        free(pw);
        free(user);
    }
    OK(sent > 1000, "r4 break 3: mutations: curl sends the secret as a credential in %d of them", sent);
    OK(leaks == 0, "r4 break 3: mutations: the secret never shown (%d leaks; first: %s)", leaks, first_leak);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    test_forms();
    test_mutations();
    test_shown();
    curl_global_cleanup();
    return tap_done();
}
