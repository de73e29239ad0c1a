"""High Card hooks: draw a random card each round; the host scores and ends the match."""
import random

from aigenora.proto.hooks import HookResult, ProtocolHooks


class Hooks(ProtocolHooks):
    def proto_init(self, options, role, args, state_dir, decision_config=None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.rounds = int(options.get("total_rounds") or 3)
        self.points = {"host": 0, "guest": 0}

    def proto_host_metadata(self):
        return ("High Card", "game,example", "supply", {"total_rounds": self.rounds})

    def proto_host_handle_join(self, msg):
        return HookResult({"action": "ready", "total_rounds": self.rounds})

    def proto_guest_handle_ready(self, msg):
        self.rounds = msg["total_rounds"]

    def proto_round_value(self, round_index, state):
        return random.randint(1, 13)

    def proto_round_judge(self, round_index, host_value, guest_value, state):
        winner = "host" if host_value > guest_value else "guest" if guest_value > host_value else "draw"
        if winner != "draw":
            self.points[winner] += 1
        over = round_index + 1 >= self.rounds
        best = max(self.points, key=self.points.get)
        tied = self.points["host"] == self.points["guest"]
        result = {
            "action": "round_result",
            "round": round_index,
            "host_card": host_value,
            "guest_card": guest_value,
            "round_winner": winner,
            "host_points": self.points["host"],
            "guest_points": self.points["guest"],
            "game_over": over,
            "game_winner": ("draw" if tied else best) if over else "none",
        }
        return HookResult(result, completed=over)

    def proto_guest_handle(self, msg):
        return HookResult(completed=msg["game_over"])

    def proto_display(self, msg, direction):
        if msg.get("action") != "round_result":
            return None
        line = f"Round {msg['round'] + 1}: {msg['host_card']} vs {msg['guest_card']} -> {msg['round_winner']}"
        if msg["game_over"]:
            line += f"; match: {msg['game_winner']} ({msg['host_points']}-{msg['guest_points']})"
        return line
