/* The real node's pod sandbox process: holds the pod's namespaces, reaps the orphans that land on it
   (it is the pod's PID 1 when the pod shares its process namespace), and exits on SIGINT or SIGTERM. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void leave(int signal_number) { _exit(signal_number == SIGTERM || signal_number == SIGINT ? 0 : 1); }

static void reap(int signal_number) {
    (void)signal_number;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void) {
    struct sigaction on_stop = {.sa_handler = leave}, on_child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
    sigaction(SIGINT, &on_stop, NULL);
    sigaction(SIGTERM, &on_stop, NULL);
    sigaction(SIGCHLD, &on_child, NULL);
    for (;;) pause();
}
