package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
)

func newFleetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Manage the agents of this machine's embedded bus, and show how servers share the rule engine (docs/fleet.md)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newFleetAddHostCmd(g), newFleetHostsCmd(g), newFleetRemoveHostCmd(g), newFleetStatusCmd(g))
	return cmd
}

func newFleetAddHostCmd(g *globals) *cobra.Command {
	var rotate bool
	var url, ca string
	cmd := &cobra.Command{
		Use:   "add-host NAME",
		Short: "Create credentials for agent NAME and print its config",
		Long: `Create the NATS user of agent NAME on this machine's embedded bus and print
the agent's config (host, role, bus) on stdout, ready to paste into the
agent's /etc/zwatch/zwatch.yaml. The password is shown only now: the state
directory keeps its bcrypt hash. A running zwatch lets the agent in within
seconds, without a restart.

The agent may publish its own facts (zwatch.v1.NAME.>) and nothing else:
not another host's, not an alert, not the JetStream API.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := fleetConfig(g)
			if err != nil {
				return err
			}
			host := args[0]
			if url == "" {
				if url, err = agentURL(c, cmd.ErrOrStderr()); err != nil {
					return withCode(exitUsage, err)
				}
			}
			caNote := ""
			if ca == "" && c.Bus.ListenTLS.Cert != "" {
				ca = c.Bus.ListenTLS.Cert
				caNote = fmt.Sprintf("# Copy %s from %s to the agent at that path (for a certificate signed by a CA: that CA, and --ca).\n", ca, c.Host)
			}
			verb := "created"
			if a, err := bus.LoadAuth(c.StateDir); err == nil {
				if _, ok := a.Agent(host); ok && rotate {
					verb = "replaced (the old password no longer works)"
				}
			}
			pw, err := bus.AddAgent(c.StateDir, host, rotate, time.Now())
			if errors.Is(err, bus.ErrAgentExists) {
				return withCode(exitFailure, err)
			}
			if err != nil {
				return err
			}
			if err := writeAgentConfig(cmd.OutOrStdout(), host, url, pw, ca, c.Host, caNote); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "credentials for %s %s in %s; a running zwatch lets the agent in within a few seconds (no restart).\n", host, verb, bus.AuthPath(c.StateDir))
			return nil
		},
	}
	cmd.Flags().BoolVar(&rotate, "rotate", false, "replace the password of a host that has credentials already")
	cmd.Flags().StringVar(&url, "url", "", "the bus URL the agent uses to reach this machine (default: from bus.listen and host)")
	cmd.Flags().StringVar(&ca, "ca", "", "path, on the agent, of the CA that signed bus.listen_tls.cert (default: the certificate's own path, right for a self-signed one)")
	return cmd
}

func newFleetHostsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "List the agents that have credentials on this machine's embedded bus",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := fleetConfig(g)
			if err != nil {
				return err
			}
			a, err := bus.LoadAuth(c.StateDir)
			none := errors.Is(err, fs.ErrNotExist)
			if err != nil && !none {
				return err
			}
			if asJSON {
				list := fleetHosts{Agents: []fleetHost{}}
				if !none {
					for _, ag := range a.Agents {
						list.Agents = append(list.Agents, fleetHost{Host: ag.Host, User: ag.User, Created: ag.Created, Replaced: ag.Replaced})
					}
				}
				return writeJSON(cmd.OutOrStdout(), list)
			}
			if none {
				fmt.Fprintln(cmd.OutOrStdout(), "no agents: add one with zwatch fleet add-host NAME")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HOST\tUSER\tCREATED\tPASSWORD REPLACED")
			for _, ag := range a.Agents {
				replaced := "-"
				if !ag.Replaced.IsZero() {
					replaced = ag.Replaced.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ag.Host, ag.User, ag.Created.Format(time.RFC3339), replaced)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (docs/json.md)")
	return cmd
}

// fleetHosts is `zwatch fleet hosts --json`: the agents, never their
// password hashes.
type fleetHosts struct {
	Agents []fleetHost `json:"agents"`
}

type fleetHost struct {
	Host     string    `json:"host"`
	User     string    `json:"user"`
	Created  time.Time `json:"created"`
	Replaced time.Time `json:"password_replaced,omitzero"`
}

func newFleetRemoveHostCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove-host NAME",
		Short: "Delete agent NAME's credentials; a running zwatch disconnects it within seconds",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := fleetConfig(g)
			if err != nil {
				return err
			}
			if err := bus.RemoveAgent(c.StateDir, args[0]); err != nil {
				if errors.Is(err, bus.ErrAgentUnknown) {
					return withCode(exitFailure, err)
				}
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "credentials for %s removed; a running zwatch disconnects the agent within a few seconds.\n", args[0])
			return nil
		},
	}
}

// fleetConfig loads the config and checks that this machine runs the
// embedded bus with a listener, the only bus whose users zwatch keeps.
func fleetConfig(g *globals) (*config.Config, error) {
	l, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	c := &l.Config
	switch {
	case c.Bus.URL != "":
		return nil, withCode(exitUsage, fmt.Errorf("bus.url is set (%s): agents of an external NATS cluster are users in the cluster's own config; see docs/fleet.md, \"The NATS cluster\"", c.Bus.URL))
	case c.Bus.Listen == "":
		return nil, withCode(exitUsage, fmt.Errorf("bus.listen is empty in %s: set it (e.g. 0.0.0.0:4222 with bus.listen_tls) so that agents can reach this machine's embedded bus", l.Path))
	}
	return c, nil
}

// agentURL is how an agent reaches bus.listen: this machine's host name
// when the listener takes every address.
func agentURL(c *config.Config, warn io.Writer) (string, error) {
	host, port, err := net.SplitHostPort(c.Bus.Listen)
	if err != nil {
		return "", fmt.Errorf("bus.listen %q: want host:port", c.Bus.Listen)
	}
	if port == "0" {
		return "", fmt.Errorf("bus.listen %q picks a random port at every start: set a fixed port such as 4222", c.Bus.Listen)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = c.Host
		fmt.Fprintf(warn, "the URL uses this machine's host name %q: pass --url if agents reach it by another name\n", host)
	}
	scheme := "nats"
	if c.Bus.ListenTLS.Cert != "" {
		scheme = "tls"
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// agentConfig is what an agent needs in its zwatch.yaml.
type agentConfig struct {
	Host string         `yaml:"host"`
	Role string         `yaml:"role"`
	Bus  agentBusConfig `yaml:"bus"`
}

type agentBusConfig struct {
	URL      string        `yaml:"url"`
	User     string        `yaml:"user"`
	Password string        `yaml:"password"`
	TLS      *agentTLSConf `yaml:"tls,omitempty"`
}

type agentTLSConf struct {
	CA string `yaml:"ca"`
}

func writeAgentConfig(w io.Writer, host, url, password, ca, server, note string) error {
	ac := agentConfig{Host: host, Role: config.RoleAgent, Bus: agentBusConfig{URL: url, User: bus.AgentUser(host), Password: password}}
	if ca != "" {
		ac.Bus.TLS = &agentTLSConf{CA: ca}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(ac); err != nil {
		return fmt.Errorf("render the agent config: %w", err)
	}
	fmt.Fprintf(w, "# zwatch agent %s, publishing to %s (zwatch fleet add-host on %s).\n", host, url, server)
	fmt.Fprintln(w, "# Holds the agent's password, shown only now: keep the file mode 600.")
	fmt.Fprint(w, note)
	_, err := w.Write(out.Bytes())
	return err
}
