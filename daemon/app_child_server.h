// The child process's side of an isolated task (app_child.h): loads the app's plugin, builds the
// task, and answers the daemon's calls on a socket until the daemon closes it; once the task runs,
// its runner's thread reads the socket itself (runtime::RunnerOptions::input). Nothing here
// guards against the app: whatever the app does wrong (a signal, an exception escaping it, a
// limit exceeded) ends this process, which is the point.
#pragma once

namespace aiac::daemon {

// Serves calls on `fd` until the daemon closes it; the process's exit code (0, or 1 when the
// daemon broke the protocol).
int ServeAppChild(int fd);

}  // namespace aiac::daemon
