"""One playbook invocation through ansible-runner and what its events say.

deploy runs ``site.yml``; drift runs the same in check mode; both want the same thing from it:
live per-host progress, a recap, diffs, the full log kept in the run record, and a clean stop on
Ctrl-C. ``runner`` is the invocation (``Playbook``, ``Selection``), ``events`` what its events say
(``PlaybookTracker``), ``task_count`` the progress bar's task count. Signals that stop a run are
handled beside the site lock (racfg.lock.local), and whole-file JSON writes beside the run record.

Vocabulary, one meaning each: a *run* is one recorded command (``racfg.run_record``, a directory
under ``.racfg/runs/``); a *playbook* is one ansible-runner invocation inside it (this package);
``<command>/command.py`` is what a command does end to end.
"""

from racfg.playbook.events import RECAP_COUNTS, SKIP_PREFIX, Diff, HostProgress, PlaybookTracker, skip_reasons
from racfg.playbook.runner import RUNNER_IDENT, Playbook, Selection
from racfg.playbook.task_count import count_tasks, remember_task_count

__all__ = ["RECAP_COUNTS", "RUNNER_IDENT", "SKIP_PREFIX", "Diff", "HostProgress", "Playbook", "PlaybookTracker",
           "Selection", "count_tasks", "remember_task_count", "skip_reasons"]
