// Audience reading and output files land here.
import PushlineCore
