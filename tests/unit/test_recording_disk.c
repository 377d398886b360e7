/* Issue 16 item 5, "after a full disk, a good line is lost": a write that fails
 * half way (here RLIMIT_FSIZE, the `ulimit -f` of t_recording.sh, in a child) used
 * to leave a partial line that the next good line was appended to, and replay
 * skipped both. Now the recorder cuts the file back to its last complete line, so
 * every line written after the disk frees up is read back. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/recording.h"
#include "core/util.h"
#include "io/file.h"
#include "io/recfile.h"
#include "io/conffile.h"
#include "tests/tap.h"

#define T0 1795946400LL /* 2026-11-29T10:00:00Z */

static void add(struct bt_recorder *r, int n, int64_t t)
{
    for (int i = 0; i < n; i++) {
        struct bt_sample smp = {.t = t - 60, .route = 0, .signal = BT_SIG_INPUT_TOKENS,
                                .value = 1000 + i};
        bt_recorder_add_sample(r, &smp, t - 60 + i); /* one group per sample: a long line */
    }
}

/* The child: a big line that does not fit, then a small one that does, twice. */
static int writer(const char *path)
{
    signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
    struct bt_config c;
    char err[256];
    bt_config_init(&c);
    int k = bt_config_add_route(&c, "triage");
    bt_strlcpy(c.routes[k].model, "anthropic.claude-3-haiku", sizeof c.routes[k].model);
    bt_config_finish(&c);
    struct bt_recorder *r = bt_recorder_open(path, &c, "live", T0, err, sizeof err);
    if (!r)
        return 10;
    struct stat st;
    if (stat(path, &st) != 0)
        return 11;
    /* room for the header and 400 bytes more: a 50-sample line (~1.5 kB) fails part
     * way through, a 1-sample line (~60 bytes) fits */
    struct rlimit rl = {.rlim_cur = (rlim_t)st.st_size + 400, .rlim_max = RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 12;
    int rc = 0;
    add(r, 50, T0);
    rc |= bt_recorder_flush(r, T0) == -1 ? 0 : 1;
    add(r, 1, T0 + 60);
    rc |= bt_recorder_flush(r, T0 + 60) == 0 ? 0 : 2;
    add(r, 50, T0 + 120);
    rc |= bt_recorder_flush(r, T0 + 120) == -1 ? 0 : 4;
    add(r, 1, T0 + 180);
    rc |= bt_recorder_flush(r, T0 + 180) == 0 ? 0 : 8;
    rc |= bt_recorder_dropped(r) == 2 && bt_recorder_lines(r) == 2 ? 0 : 16;
    bt_recorder_close(r);
    bt_config_free(&c);
    return rc;
}

int main(void)
{
    char dir[] = "/tmp/bedtop-disk.XXXXXX";
    if (!mkdtemp(dir)) {
        OK(false, "mkdtemp");
        return tap_done();
    }
    char path[256];
    snprintf(path, sizeof path, "%s/full.rec", dir);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(writer(path));
    int status = 0;
    waitpid(pid, &status, 0);
    OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "the big lines fail, the small ones succeed (child status %d)", status);

    size_t len = 0;
    char *text = bt_read_file(path, 1 << 20, &len);
    OK(text && len && text[len - 1] == '\n', "the file ends on a line boundary");
    struct bt_replay rp;
    char err[512] = "";
    bool ok = bt_replay_open(&rp, path, NULL, NULL, err, sizeof err);
    OK(ok, "the recording opens (%s)", err);
    if (ok) {
        OK(rp.skipped == 0, "no line skipped (%lu: %s)", rp.skipped, rp.first_problem);
        OK(rp.npolls == 2 && rp.polls[0] == T0 + 60 && rp.polls[1] == T0 + 180,
           "after a full disk, no good line is lost: both small lines read back (%zu polls)",
           rp.npolls);
        bt_replay_free(&rp);
    }
    free(text);
    unlink(path);
    rmdir(dir);
    return tap_done();
}
