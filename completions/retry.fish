# SPDX-License-Identifier: ISC
# fish completion for retry(1).  Offers retry's options up to the first
# operand (or "--"), then completes the command and its arguments with
# __fish_complete_subcommand.

# __retry_takes_value OPT: OPT ("--jitter", "--ji") needs a value, as
# getopt_long takes an unambiguous abbreviation for the whole name.
function __retry_takes_value
    set -l name (string replace -r -- '^--' '' $argv[1])
    set -l valued alert-after attempts base budget budget-min cap ci circuit \
        circuit-reset circuit-status cool deadline env-from-hooks factor \
        hook-grace http-4xx jitter job job-reset job-status key kill-after \
        max-delay metrics min-time on on-giveup on-output on-recover \
        on-retry on-start on-success on-tolerate report reset-after seed signal splay \
        stop-on stop-on-output store store-fail store-timeout timeout trace \
        trace-service trip
    set -l all $valued buffer-stdout circuit-list dry-run help \
        hint-from-stderr notify-pass quiet quiet-unless-failed replay-stdin \
        share-stdin verbose version
    if contains -- $name $all
        contains -- $name $valued
        return
    end
    set -l found
    for o in $all
        string match -q -- "$name*" $o; and set -a found $o
    end
    test (count $found) -eq 1; and contains -- $found $valued
end

# __retry_scan: walks the words before the cursor as retry does and prints
# "option" (the cursor word is one of retry's options), "value" (it is an
# option's value) or "command N" (the command starts at word N).
function __retry_scan
    set -l tokens (commandline -opc)
    set -l n (count $tokens)
    set -l i 2
    while test $i -le $n
        set -l t $tokens[$i]
        set -l valued 0
        switch $t
            case --
                echo command (math $i + 1)
                return
            case '--*=*'
            case '--?*'
                __retry_takes_value $t; and set valued 1
            case '-?*'
                # A cluster whose last letter wants a value: -qn 3.
                string match -qr -- '^-[hqVvIO]*[bcDfjKknosTx]$' $t
                and set valued 1
            case '*'
                echo command $i
                return
        end
        if test $valued -eq 1
            set i (math $i + 1)
            if test $i -gt $n
                echo value
                return
            end
        end
        set i (math $i + 1)
    end
    if string match -q -- '-*' (commandline -ct)
        echo option
    else
        echo command $i
    end
end

# __retry_circuits: the names of the circuits that have a record, the
# files in the state directory as retry finds it.  Symbolic links are left
# out: retry refuses them.
function __retry_circuits
    # $argv[1]: .jobs, for the jobs' records in that subdirectory.
    set -l dir
    if test -n "$RETRY_STATE_DIR"
        set dir $RETRY_STATE_DIR
    else if test -n "$XDG_STATE_HOME"
        set dir $XDG_STATE_HOME/retry
    else if test -n "$HOME"
        set dir $HOME/.local/state/retry
    else
        return
    end
    test -n "$argv[1]"; and set dir $dir/$argv[1]
    set -l files $dir/*
    # Hidden ones only for a name begun with ".", as for file names.
    set -l typed (string replace -r -- '^--[a-z-]+=' '' (commandline -ct))
    string match -q -- '.*' "$typed"; and set -a files $dir/.*
    for f in $files
        if test -f $f; and not test -L $f
            string replace -r -- '.*/' '' $f
        end
    end
end

function __retry_before_command
    not string match -q -- 'command *' (__retry_scan)
end

function __retry_at_command
    string match -q -- 'command *' (__retry_scan)
end

function __retry_complete_command
    set -l at (string split ' ' -- (__retry_scan))[2]
    set -l tokens (commandline -opc)
    set -l words
    if test $at -le (count $tokens)
        set words (string escape -- $tokens[$at..-1])
    end
    __fish_complete_subcommand --commandline $words (commandline -ct)
end

complete -c retry -f

# The command and its arguments.
complete -c retry -n __retry_at_command -xa '(__retry_complete_command)'

# Kept in step with retry's --help and sources by tests/completion.bats.
# Every signal name retry knows is offered, whatever the platform: WINCH
# and IO are there on Linux, macOS and FreeBSD, PWR on Linux alone, and
# retry answers a name its platform lacks with "unknown signal".
set -l cond __retry_before_command
set -l jitters "none\t'the full step, no randomness'" \
    "full\t'uniform between 0 and the step'" \
    "equal\t'uniform between half the step and the step'" \
    "decorrelated\t'uniform between base and 3 times the last delay'"
set -l signals HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE \
    ALRM TERM CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF SYS \
    WINCH IO PWR

# Attempts and time.
complete -c retry -n $cond -s n -l attempts -x -d 'Attempts in all, 0 for no limit (5)'
complete -c retry -n $cond -s D -l deadline -x -d 'Give up DUR after the start'
complete -c retry -n $cond -l min-time -x -d 'Start no attempt with less than DUR left before the deadline'
complete -c retry -n $cond -s T -l timeout -x -d 'Stop an attempt that runs longer than DUR'
complete -c retry -n $cond -s s -l signal -xa "$signals" -d 'Signal that stops an attempt (TERM)'
complete -c retry -n $cond -s k -l kill-after -x -d 'SIGKILL a stopped attempt alive after DUR (10s)'
complete -c retry -n $cond -l reset-after -x -d 'Count attempts and delays afresh after an attempt that ran DUR'
# Backoff.
complete -c retry -n $cond -s b -l base -x -d 'First delay step (1s)'
complete -c retry -n $cond -s f -l factor -x -d 'Growth of the step per attempt (2)'
complete -c retry -n $cond -s c -l cap -x -d 'Largest delay (30s)'
complete -c retry -n $cond -l max-delay -x -d 'Largest delay (30s), as --cap'
complete -c retry -n $cond -s j -l jitter -xa "$jitters" -d 'How the delay is drawn (equal)'
complete -c retry -n $cond -l seed -x -d 'Seed the generator for a reproducible schedule'
complete -c retry -n $cond -l splay -x -d 'Wait a random time up to DUR before the first attempt'
complete -c retry -n $cond -l hint-from-stderr -d 'Also wait as a Retry-After header on stderr says'
# Which failures.
complete -c retry -n $cond -s o -l on -x -d 'Retry these exit statuses (1-124,128-255)'
complete -c retry -n $cond -s x -l stop-on -x -d 'Never retry these exit statuses'
complete -c retry -n $cond -l on-output -x -d 'Also retry when a line of output matches RE'
complete -c retry -n $cond -l stop-on-output -x -d 'Never retry when a line of output matches RE'
complete -c retry -n $cond -l http-4xx -xa "stop\t'end the run on a 4xx that is no rate limit' retry\t'retry a 4xx as any other failure'" -d 'What an HTTP 4xx in the hint does (stop)'
complete -c retry -n $cond -s K -l key -x -d 'Idempotency key for every attempt'
# Many runs, one downstream.
complete -c retry -n $cond -l circuit -xa '(__retry_circuits)' -d 'Share a circuit breaker and budget with runs of NAME'
complete -c retry -n $cond -l trip -x -d 'Open the circuit after N failures in a row (5), or at P% of the last M'
complete -c retry -n $cond -l cool -x -d 'Keep it open DUR, doubled per opening in a row (30s)'
complete -c retry -n $cond -l budget -x -d 'At most N retries, or P% of first attempts, per DUR across all runs of NAME'
complete -c retry -n $cond -l budget-min -x -d 'Retries a P%/DUR budget allows besides its share (3)'
complete -c retry -n $cond -l circuit-status -xa '(__retry_circuits)' -d 'Print the record of NAME and exit'
complete -c retry -n $cond -l circuit-list -d 'List the names that have a record and exit'
complete -c retry -n $cond -l circuit-reset -xa '(__retry_circuits)' -d 'Clear the record of NAME and exit'
complete -c retry -n $cond -l store -x -d 'Keep the circuit in Redis, shared by many hosts'
complete -c retry -n $cond -l store-timeout -x -d 'Give up on a step of the store after DUR (250ms)'
complete -c retry -n $cond -l store-fail -xa "open\t'go on as if there were no circuit' closed\t'exit 75 before the next attempt'" -d 'When the store fails (open)'
# Input and output.
complete -c retry -n $cond -s I -l replay-stdin -d 'Give every attempt the same standard input, any size'
complete -c retry -n $cond -l share-stdin -d 'Let each attempt read on where the last one stopped'
complete -c retry -n $cond -s O -l buffer-stdout -d "Hold each attempt's output; only the last one's to stdout"
# Messages.
complete -c retry -n $cond -l dry-run -d 'Print the delay schedule and exit'
complete -c retry -n $cond -s q -l quiet -d "Print only usage errors and retry's own failures"
complete -c retry -n $cond -s Q -l quiet-unless-failed -d "Print nothing if the run succeeds; each attempt's output if it fails"
complete -c retry -n $cond -s v -l verbose -d 'Also print the policy, delay origins, a summary'
complete -c retry -n $cond -s h -l help -d 'Print help and exit'
complete -c retry -n $cond -s V -l version -d 'Print the version and exit'
complete -c retry -n $cond -l ci -xa "none\t'no groups, annotations or files' github\t'GitHub Actions' gitlab\t'GitLab CI' auto\t'from GITHUB_ACTIONS or GITLAB_CI'" -d 'Fold attempts in a CI log, annotate the run (auto)'
complete -c retry -n $cond -l report -rF -d 'Write a JSON report of the run to FILE (- for stderr)'
complete -c retry -n $cond -l metrics -rF -d "Write the run's Prometheus metrics to FILE at its end"
# Traces and systemd.
complete -c retry -n $cond -l trace -rF -d "Append the run's OpenTelemetry spans to FILE"
complete -c retry -n $cond -l trace-service -x -d "The spans' service.name (retry)"
complete -c retry -n $cond -l notify-pass -d 'Pass NOTIFY_SOCKET on to attempts and hooks'
# Hooks.
complete -c retry -n $cond -l on-retry -x -d 'Run CMD after a failed attempt, before the next'
complete -c retry -n $cond -l on-giveup -x -d 'Run CMD once when the run ends without success'
complete -c retry -n $cond -l on-success -x -d 'Run CMD once when the run ends with success'
complete -c retry -n $cond -l hook-grace -x -d 'Time the end hooks may run past the deadline'
complete -c retry -n $cond -l on-start -x -d 'Run CMD once before the first attempt'
complete -c retry -n $cond -l env-from-hooks -xa "safe\t'refuse PATH, IFS and LD_* names' all\t'take every name but RETRY_*'" -d 'Names RETRY_ENV_FILE may set (safe)'
# The job.
complete -c retry -n $cond -l job -xa '(__retry_circuits .jobs)' -d 'Keep the history of failed runs in a row of job NAME'
complete -c retry -n $cond -l alert-after -x -d 'A failed run alerts only as the Nth in a row (1)'
complete -c retry -n $cond -l on-tolerate -x -d 'Run CMD once for a failed run that does not alert'
complete -c retry -n $cond -l on-recover -x -d 'Run CMD once for the success that follows an alert'
complete -c retry -n $cond -l job-status -xa '(__retry_circuits .jobs)' -d "Print the job's history and exit"
complete -c retry -n $cond -l job-reset -xa '(__retry_circuits .jobs)' -d "Forget the job's history and exit"
