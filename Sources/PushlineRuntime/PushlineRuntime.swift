// Stage actors and run orchestration land here.
import PushlineCore
