/* The one URL parser, on curl_url(): see url.h. */
#include "net/url.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static char *take(char *curl_owned)
{
    char *s = curl_owned ? bt_xstrdup(curl_owned) : NULL;
    curl_free(curl_owned);
    return s;
}

bool bt_url_parse(const char *in, struct bt_url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    CURLU *h = curl_url();
    char *s = NULL;
    bool ok = false;
    if (!h || !in || curl_url_set(h, CURLUPART_URL, in, 0) != CURLUE_OK) {
        snprintf(err, errlen, "invalid URL");
        goto out;
    }
    curl_url_get(h, CURLUPART_SCHEME, &s, 0);
    u->scheme = take(s);
    if (!u->scheme || (strcmp(u->scheme, "http") != 0 && strcmp(u->scheme, "https") != 0)) {
        snprintf(err, errlen, "invalid URL: only http and https are supported");
        goto out;
    }
    s = NULL;
    if (curl_url_get(h, CURLUPART_HOST, &s, 0) != CURLUE_OK || !s || !*s) {
        curl_free(s);
        snprintf(err, errlen, "invalid URL: no host");
        goto out;
    }
    u->host = take(s);
    s = NULL;
    curl_url_get(h, CURLUPART_PORT, &s, 0);
    u->port = take(s);
    s = NULL;
    curl_url_get(h, CURLUPART_PATH, &s, 0);
    u->path = take(s);
    if (!u->path || !*u->path) {
        free(u->path);
        u->path = bt_xstrdup("/");
    }
    s = NULL;
    curl_url_get(h, CURLUPART_QUERY, &s, 0);
    u->query = take(s);
    if (u->query && !*u->query) {
        free(u->query);
        u->query = NULL;
    }
    curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0);
    s = NULL;
    if (curl_url_get(h, CURLUPART_URL, &s, 0) != CURLUE_OK || !s) {
        curl_free(s);
        snprintf(err, errlen, "invalid URL");
        goto out;
    }
    u->url = take(s);
    char shown[2048];
    bt_url_redact(u->url, shown, sizeof shown);
    u->shown = bt_xstrdup(shown);
    ok = true;
out:
    curl_url_cleanup(h);
    if (!ok)
        bt_url_free(u);
    return ok;
}

void bt_url_free(struct bt_url *u)
{
    free(u->url);
    free(u->scheme);
    free(u->host);
    free(u->port);
    free(u->path);
    free(u->query);
    free(u->shown);
    memset(u, 0, sizeof *u);
}
