package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

func newRunCmd(g *globals) *cobra.Command {
	var role string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon: collectors, embedded NATS bus, rules and notifiers",
		Long: `Run zwatch in the foreground until SIGINT or SIGTERM.

By default it embeds a NATS server with JetStream stored under the state
directory; set bus.url to use an external NATS server or cluster instead.

--role (or the role key) splits zwatch over many machines (docs/fleet.md):
agent runs the collectors only and publishes to bus.url; server runs the
rule engine and the notifiers only; all (the default) runs everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			if role != "" {
				l.Config.Role = role
				if err := l.Config.ValidateRole(); err != nil {
					return withCode(exitUsage, err)
				}
			}
			log := g.logger(&l.Config)
			for _, w := range l.Warnings {
				log.Warn(w)
			}
			log.Info("config loaded", "path", l.Path)
			daemon.ApplyRuntimeMemory(&l.Config, os.Getenv, log)
			opts := runOptions()
			opts.SystemRoot = "/"
			return daemon.Run(cmd.Context(), &l.Config, opts, log)
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "all, agent or server (overrides the role key; see docs/fleet.md)")
	return cmd
}

func newCheckConfigCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check-config [FILE]",
		Short: "Validate a config file and print the effective config, secrets masked",
		Long: `Validate a config file and print the effective config, with every secret
masked. --json prints the same as one object (docs/json.md), and an invalid
config as its list of errors, each with its key, value and problem.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				g.configPath, g.configSet = args[0], true
			}
			l, err := g.loadConfig()
			if err != nil {
				if asJSON {
					_ = writeJSON(cmd.OutOrStdout(), invalidConfig(g.configPath, err))
				}
				return err
			}
			out, err := l.Config.Masked()
			if err != nil {
				return err
			}
			if asJSON {
				return writeCheckedConfig(cmd.OutOrStdout(), l, out)
			}
			for _, w := range l.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			notes := append(answerNotes(l.Config.Notify), quietNotes(l.Config.Notify, time.Now())...)
			notes = append(notes, replaceNotes(l.Config)...)
			if u := l.Config.HTTP.AnswerURL(); u != "" {
				notes = append(notes, "every page carries links to acknowledge or snooze it at "+u+" (a login of http.users, then a confirmation; each link works once, for 72 h)")
			}
			for _, n := range notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "# %s: valid\n%s", l.Path, out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/json.md)")
	return cmd
}

func newVersionCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print zwatch's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "zwatch %s (%s, %s)\n", v.Shown(), v.GoVersion, v.Platform)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/json.md)")
	return cmd
}

// isUsageError recognises cobra's flag and argument errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires ", "invalid argument", "flag needs an argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return errors.Is(err, errUsage)
}

var errUsage = errors.New("usage")

// quietNotes names the channels with quiet hours, in the box's zone, and
// what they hold back.
func quietNotes(cfg config.NotifyConfig, now time.Time) []string {
	var out []string
	for _, c := range cfg.Channels {
		if c.Quiet == nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s is quiet from %s to %s every night (the box's time zone, %s now): its warnings and info wait for the end, criticals go at once",
			c.Name, c.Quiet.From, c.Quiet.To, now.Format("MST")))
	}
	return out
}

// replaceNotes says where a replacement can be confirmed from the phone
// (actions.replace): Telegram channels with answer_users; none is a
// mistake worth saying.
func replaceNotes(cfg config.Config) []string {
	if !cfg.Actions.Replace {
		return nil
	}
	chans, err := notifiers.Build(cfg.Notify)
	if err != nil {
		return nil
	}
	var on []string
	for _, c := range chans {
		if a, ok := c.Sender.(channel.Answering); ok && c.Type == "telegram" && a.EnableAnswers(answer.Key(make([]byte, 32)), c.Name) {
			on = append(on, c.Name)
		}
	}
	if len(on) == 0 {
		return []string{"actions.replace is on, but no channel can offer it: it needs a telegram channel with answer_users; elsewhere run zwatch replace on the box"}
	}
	return []string{"actions.replace: pages of this machine's failing disks offer Replace on " + strings.Join(on, ", ") + "; zwatch replace's checks run at the tap, and zpool replace only after a second, specific confirmation"}
}

// answerNotes says, channel by channel, whether a page can be answered
// from its app (channel.Answering with someone allowed to), or only with
// zwatch ack on the box.
func answerNotes(cfg config.NotifyConfig) []string {
	chans, err := notifiers.Build(cfg)
	if err != nil {
		return nil // the config's own check said what is wrong
	}
	var can, cannot []string
	hint := ""
	for _, c := range chans {
		a, ok := c.Sender.(channel.Answering)
		switch {
		case ok && a.EnableAnswers(answer.Key(make([]byte, 32)), c.Name):
			can = append(can, c.Name+" ("+c.Type+")")
		case ok:
			cannot = append(cannot, c.Name+" ("+c.Type+")")
			how := "list who may answer in its answer_users"
			switch c.Type {
			case "pushover":
				how = "set its emergency: {retry: 1m, expire: 1h}, and acknowledge critical pages in the app"
			case "signal":
				how = "list the numbers that may answer in its answer_numbers"
			}
			hint = " (" + c.Name + " could: " + how + ")"
		default:
			cannot = append(cannot, c.Name+" ("+c.Type+")")
		}
	}
	var out []string
	if len(can) > 0 {
		out = append(out, "pages can be answered (acknowledge, snooze) from the app of "+strings.Join(can, ", "))
	}
	if len(cannot) > 0 {
		out = append(out, "pages of "+strings.Join(cannot, ", ")+" cannot carry an answer: answer them with zwatch ack/snooze INCIDENT on the box, or through the status page's links (http.public_url)"+hint)
	}
	return out
}
