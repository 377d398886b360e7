/* The one URL parser (net/url.c, on curl_url) and the one redactor (bt_url_redact), against
 * curl's own reading (issue 37 break 3): for any text curl accepts, the password it would
 * send as Basic auth (or a user alone, which may be a token) and every query value never
 * appear in what bedtop shows, neither through the parser nor through the redactor on the
 * raw text; a refused URL says why, without its text. */
#include <curl/curl.h>
#include <string.h>

#include "core/util.h"
#include "net/url.h"
#include "tests/fuzz/fuzz.h"

static char *part(CURLU *u, CURLUPart p)
{
    char *s = NULL;
    if (curl_url_get(u, p, &s, 0) != CURLUE_OK)
        return NULL;
    return s;
}

/* What curl reads as the credential of shown (the redactor's output) must be *** : the
 * password if the original had one, else the user. When curl cannot read shown at all,
 * the secret must not be in it (unless it is part of what is shown by design). */
static bool hidden(const char *shown, const char *pw, const char *user, int elsewhere)
{
    CURLU *u = curl_url();
    bool ok;
    if (u && curl_url_set(u, CURLUPART_URL, shown, 0) == CURLUE_OK) {
        char *pw2 = part(u, CURLUPART_PASSWORD), *user2 = part(u, CURLUPART_USER);
        if (pw)
            ok = pw2 && !strcmp(pw2, "***");
        else
            ok = !user || (user2 && !strcmp(user2, "***"));
        curl_free(pw2);
        curl_free(user2);
    } else {
        const char *secret = pw ? pw : user;
        ok = elsewhere || !secret || strlen(secret) < 3 || !strstr(shown, secret);
    }
    curl_url_cleanup(u);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[512];
    if (size >= sizeof in)
        size = sizeof in - 1;
    memcpy(in, data, size);
    in[size] = '\0';
    char raw[1024];
    bt_url_redact(in, raw, sizeof raw); /* any text: never crashes, always ends */

    CURLU *u = curl_url();
    if (!u)
        return 0;
    if (curl_url_set(u, CURLUPART_URL, in, 0) == CURLUE_OK) {
        char *pw = part(u, CURLUPART_PASSWORD), *user = part(u, CURLUPART_USER);
        char *host = part(u, CURLUPART_HOST), *path = part(u, CURLUPART_PATH);
        char *query = part(u, CURLUPART_QUERY), *port = part(u, CURLUPART_PORT);
        const char *secret = pw ? pw : user;
        /* the secret may also be part of what is shown: the host, port, path, a query
         * name (the value is ***) or the user beside a password */
        int elsewhere = secret && ((host && strstr(host, secret)) || (path && strstr(path, secret)) ||
                                   (query && strstr(query, secret)) || (port && strstr(port, secret)) ||
                                   (pw && user && strstr(user, secret)) || /* the user is shown */
                                   strstr("http https ://", secret));
        if (secret && !hidden(raw, pw, user, elsewhere))
            abort();
        struct bt_url b;
        char err[256] = "";
        bool ok = bt_url_parse(in, &b, err, sizeof err);
        FUZZ_NEED_ERR(ok, err);
        if (ok) {
            if (secret && !hidden(b.shown, pw, user, elsewhere))
                abort();
            if (b.query && strchr(b.shown, '?') && strstr(b.shown, "=") &&
                strstr(strchr(b.shown, '?'), "=") && !strstr(b.shown, "=***"))
                abort(); /* a query value shown */
            bt_url_free(&b);
        }
        curl_free(pw);
        curl_free(user);
        curl_free(host);
        curl_free(path);
        curl_free(query);
        curl_free(port);
    }
    curl_url_cleanup(u);
    return 0;
}
