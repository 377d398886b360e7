/* Issue 16 item 7, "config start-up is quadratic": 20,000 routes load, each with the
 * line of its own [route NAME] section, and a route defined twice is still found (at
 * the line of its second section) however far apart the two are. The time it takes
 * is a benchmark (make bench: "config: 20,000 routes vs 10 x 2,000"), not asserted
 * here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "io/conffile.h"
#include "tests/tap.h"

#define N 20000

/* [bedtop] on lines 1-2, then route i on lines 3 + 4i .. 6 + 4i. */
static char *big_config(int n, const char *extra)
{
    struct bt_buf b = {0};
    bt_buf_puts(&b, "[bedtop]\nregion = us-east-1\n");
    for (int i = 0; i < n; i++)
        bt_buf_printf(&b, "[route r%05d]\nmodel = anthropic.claude-%d\nmax_tokens = %d\n\n", i, i,
                      1000 + i);
    bt_buf_puts(&b, extra);
    return b.buf;
}

int main(void)
{
    char err[512] = "";
    struct bt_config c;
    bt_config_init(&c);
    char *text = big_config(N, "");
    bool ok = bt_config_parse_string(&c, text, "big.conf", err, sizeof err);
    OK(ok, "20,000 routes load (%s)", err);
    OK(c.nroutes == N, "all 20,000 routes (%d)", c.nroutes);
    bool lines = true, fields = true;
    for (int i = 0; i < c.nroutes; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%05d", i);
        lines = lines && c.routes[i].line == 3 + 4 * i;
        fields = fields && !strcmp(c.routes[i].name, name) && c.routes[i].max_tokens == 1000 + i;
    }
    OK(lines, "every route has the line of its own section");
    OK(fields, "every route has its own keys");
    OK(bt_config_find_route(&c, "r19999") == N - 1, "the last route is found by name");
    bt_config_free(&c);
    free(text);

    /* the first route again after 20,000 others: line 3 + 4N */
    bt_config_init(&c);
    text = big_config(N, "[route r00000]\nmodel = x\n");
    ok = bt_config_parse_string(&c, text, "big.conf", err, sizeof err);
    char want[128];
    snprintf(want, sizeof want, "big.conf:%d: route 'r00000' defined twice", 3 + 4 * N);
    OK(!ok && !strcmp(err, want), "a route defined twice 20,000 sections apart (%s)", err);
    bt_config_free(&c);
    free(text);

    /* a [route twice] with keys after every one of 20,000 routes: each key of each
     * copy used to index the whole text again (quadratic; fuzz_config_routes timed
     * out on 10,000). Route i on line 3 + 4i, [route twice] on 5 + 4i: the error
     * names the second copy, line 9. */
    {
        struct bt_buf b = {0};
        bt_buf_puts(&b, "[bedtop]\nregion = us-east-1\n");
        for (int i = 0; i < N; i++)
            bt_buf_printf(&b, "[route r%05d]\nmodel = m%d\n[route twice]\nmodel = x\n", i, i);
        bt_config_init(&c);
        ok = bt_config_parse_string(&c, bt_buf_str(&b), "big.conf", err, sizeof err);
        OK(!ok && !strcmp(err, "big.conf:9: route 'twice' defined twice"),
           "a route section written 20,000 times, keys in each copy (%s)", err);
        bt_config_free(&c);
        bt_buf_free(&b);
    }

    /* blanks before the name do not make another route (as before) */
    bt_config_init(&c);
    ok = bt_config_parse_string(&c, "[route a]\nmodel = m\n[route b]\nmodel = m\n[route  a]\nmodel = n\n",
                                "dup.conf", err, sizeof err);
    OK(!ok && strstr(err, "dup.conf:5: route 'a") && strstr(err, "defined twice"),
       "[route a] and [route  a] are the same route (%s)", err);
    bt_config_free(&c);

    /* keys of one section split by another section still reach their route */
    bt_config_init(&c);
    ok = bt_config_parse_string(&c, "[route a]\nmodel = m\n[bedtop]\ninterval = 30\n[route b]\nmodel = k\n",
                                "ok.conf", err, sizeof err);
    OK(ok && c.nroutes == 2 && c.routes[0].line == 1 && c.routes[1].line == 5 &&
       !strcmp(c.routes[1].model, "k"), "routes and lines around a [bedtop] section (%s)", err);
    bt_config_free(&c);

    /* a route with no model still names its section's line */
    bt_config_init(&c);
    ok = bt_config_parse_string(&c, "\n\n[route lone]\nregion = us-east-1\n", "m.conf", err, sizeof err);
    OK(!ok && strstr(err, "m.conf:3: route 'lone' has no model"), "no model: the section's line (%s)", err);
    bt_config_free(&c);
    /* inih keeps 49 bytes of a section name: a longer route name used to be cut to
     * 43 characters silently (and two such routes could merge), with line 0 */
    bt_config_init(&c);
    ok = bt_config_parse_string(&c, "[bedtop]\n[route aaaaaaaaaabbbbbbbbbbccccccccccddddddddddeeeX]\nmodel = m\n",
                                "long.conf", err, sizeof err);
    OK(!ok && strstr(err, "long.conf:2: section name longer than 49 characters"),
       "a route name inih would cut is refused at its line (%s)", err);
    bt_config_free(&c);
    bt_config_init(&c);
    ok = bt_config_parse_string(&c, "[route aaaaaaaaaabbbbbbbbbbccccccccccddddddddddeee]\nmodel = m\n",
                                "long.conf", err, sizeof err);
    OK(ok && c.nroutes == 1 && strlen(c.routes[0].name) == 43 && c.routes[0].line == 1,
       "a 43-character route name is read whole (%s)", err);
    bt_config_free(&c);
    return tap_done();
}
