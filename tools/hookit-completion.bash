# bash completion for hookit: commands, each command's options (read from
# `hookit CMD --help`, so they never go stale), and profile files.
# Installed as share/bash-completion/completions/hookit.
_hookit()
{
    local cur prev cmd i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    # --format=VALUE: bash splits the word at '=' (COMP_WORDBREAKS), into
    # "--format" "=" "VALUE", or "--format" "=" while nothing follows yet;
    # without '=' in COMP_WORDBREAKS it stays one word
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]]; then
        prev=${COMP_WORDS[COMP_CWORD-2]}
    elif [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        cur=${cur#*=}
    fi
    cmd=
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
        else
            local cmds
            cmds=$("${COMP_WORDS[0]}" --help 2>/dev/null | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {print $1}')
            COMPREPLY=($(compgen -W "$cmds help" -- "$cur"))
        fi
        return
    fi
    # after `hookit run ... --`, complete the program and its arguments
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            COMPREPLY=($(compgen -c -f -- "$cur"))
            return
        fi
    done
    case $prev in
    -o|--output)
        if [[ $cmd == run ]]; then
            COMPREPLY=($(compgen -d -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return ;;
    -f|--format)
        COMPREPLY=($(compgen -W "json callgrind folded svg chrome pprof" -- "$cur"))
        return ;;
    --demangle)
        COMPREPLY=($(compgen -W "simple full no" -- "$cur"))
        return ;;
    -s|--sort)
        if [[ $cmd == diff ]]; then
            COMPREPLY=($(compgen -W "self incl cpu wait calls" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "calls incl excl cpu wait name" -- "$cur"))
        fi
        return ;;
    -w|--weight)
        COMPREPLY=($(compgen -W "time cpu wait calls" -- "$cur"))
        return ;;
    -p|--profiler)
        if [[ $cmd == run || $cmd == link ]]; then
            local dir
            dir=$(dirname "$(readlink -f "$(type -P "${COMP_WORDS[0]}" || echo "${COMP_WORDS[0]}")")")/../lib/hookit
            COMPREPLY=($(compgen -W "$(ls "$dir" 2>/dev/null | sed -n 's/^lib\(.*\)\.so$/\1/p')" -- "$cur"))
            return
        fi ;;
    -u|--units)
        COMPREPLY=($(compgen -W "ns us ms s auto" -- "$cur"))
        return ;;
    esac
    if [[ $cmd == help ]]; then
        local cmds
        cmds=$("${COMP_WORDS[0]}" --help 2>/dev/null | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {print $1}')
        COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        local opts
        opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    # ctl PID COMMAND: once the PID (or --all) is there, the commands
    if [[ $cmd == ctl ]]; then
        for ((i = 2; i < COMP_CWORD; i++)); do
            if [[ ${COMP_WORDS[i]} =~ ^[0-9]+$ || ${COMP_WORDS[i]} == --all ]]; then
                COMPREPLY=($(compgen -W "start stop flush reset zerobase" -- "$cur"))
                return
            fi
        done
    fi
    case $cmd in
    top|ctl|snapshot|recover)
        COMPREPLY=($(compgen -W "$(ls /proc 2>/dev/null | grep -E '^[0-9]+$')" -- "$cur")) ;;
    *)
        COMPREPLY=($(compgen -f -X '!*.@(prof|trace|log|part)' -- "$cur") $(compgen -d -- "$cur")) ;;
    esac
}
complete -F _hookit hookit
