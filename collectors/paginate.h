/* One pagination loop for every AWS list call: the token sent back, the page
 * counter and the guard against a listing that does not end. A collector
 * describes its call (how to send the request for a token, how to read one page)
 * and hears once how the listing ended; the loop between is written here only. */
#ifndef BEDTOP_PAGINATE_H
#define BEDTOP_PAGINATE_H
#include <stdbool.h>
#include <stddef.h>

#include "net/http.h"

/* How a listing ended, said once to ops->end. */
enum bt_pages_end {
    BT_PAGES_DONE,    /* the last page came (no token) */
    BT_PAGES_RUNAWAY, /* the token repeated, or max_pages pages came: pagination does not end */
    BT_PAGES_HTTP,    /* a page was answered with an error (resp says which) */
    BT_PAGES_PARSE,   /* a page could not be read (err says why) */
};

struct bt_pages_ops {
    /* Send the request for token (NULL: the first page), with done(done_arg, resp)
     * as its callback. */
    void (*submit)(void *arg, const char *token, bt_http_cb done, void *done_arg);
    /* One 200 answer: deliver its items, *next = a malloc'd token or NULL (the last
     * page). false, with err set, when the page cannot be read. */
    bool (*page)(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                 size_t errlen);
    /* The listing ended (resp: the last answer; err: BT_PAGES_PARSE's reason, else ""). */
    void (*end)(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                const char *err);
};

struct bt_pages {
    const struct bt_pages_ops *ops;
    void *arg;
    int max_pages;  /* the page that would be max_pages + 1 is not asked: BT_PAGES_RUNAWAY */
    char *token;    /* the token the request out carries (NULL: first page) */
    int pages;      /* pages answered with a token so far */
};

/* Starts a listing of ops's call from its first page, at most max_pages pages (a token
 * left from an earlier listing is dropped). ops->end may start the next listing. */
void bt_pages_start(struct bt_pages *p, const struct bt_pages_ops *ops, void *arg,
                    int max_pages);
/* The HTTP callback the listing's requests carry (arg: the struct bt_pages). */
void bt_pages_answer(void *arg, const struct bt_http_resp *resp);
/* Frees what a listing holds (a listing given up, or the owner's end). */
void bt_pages_free(struct bt_pages *p);
#endif
